/**
 * Actions applied to NDJSON lines as bytes (line-chain.ts, member-scan.ts) give the events
 * the chain gives on parsed objects: a seeded fuzz of random lines (duplicate keys, escapes,
 * whitespace, nesting, lines the scan refuses) through random top-level chains, read the
 * way the gcs input reads them, compared event by event, with the same counts and errors.
 * Chains that need whole events are left to the object path, and so are jobs whose
 * metadata fields the actions touch.
 */
import { describe, expect, it } from 'vitest';
import { type ActionFailure, compileActionChain } from '../../functions/runner/actions/chain.ts';
import { jsonLinesWithActions } from '../../functions/runner/inputs/gcs/batches.ts';
import type { GcsPlan } from '../../functions/runner/inputs/gcs/config.ts';
import { eventShape, type ShapePlan } from '../../functions/runner/inputs/gcs/fields.ts';
import type { ObjectMeta } from '../../functions/runner/inputs/gcs/list.ts';
import { validActions } from '../helpers/actions.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';

const META = { bucket: 'b-1', name: 'logs/a.json', generation: '7', size: 10 } as ObjectMeta;
const NO_FIELDS: ShapePlan = { fields: {} as GcsPlan['fields'] };
const OBJECT_FIELD: ShapePlan = { fields: { objectName: 'object' } as GcsPlan['fields'] };

const actions = validActions;

function chainOf(list: unknown[]) {
  const failures: ActionFailure[] = [];
  const chain = compileActionChain(actions(list), { onError: (f) => failures.push(f) });
  chain.bind({ job: 'job-1', worker: 'w-1' });
  return { chain, failures };
}

/** The lines through the JSON-lines batcher, as payload.ts drives it: refused lines are parsed. */
function throughLines(list: unknown[], lines: string[], plan = NO_FIELDS) {
  const { chain, failures } = chainOf(list);
  const batcher = jsonLinesWithActions(chain).batcher(plan, META);
  const bytes = Buffer.from(lines.map((line) => `${line}\n`).join(''));
  const spans: number[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++)
    if (bytes[i] === 0x0a) {
      spans.push(start, i);
      start = i + 1;
    }
  let refused = 0;
  for (let i = 0; i < spans.length; i += 2) {
    i = batcher.lines(bytes, spans, i);
    if (i === spans.length) break;
    refused++;
    batcher.value(JSON.parse(bytes.toString('utf8', spans[i], spans[i + 1])));
  }
  const batch = batcher.take();
  const text = batch ? Buffer.concat(batch.chunks).toString('utf8') : '';
  const out = text
    ? text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line))
    : [];
  return { out, count: batch?.count ?? 0, failures, stats: chain.takeStats(), refused, lines: chain.lines };
}

/** The reference: each line parsed, shaped, through `chain.apply`, serialized. */
function throughObjects(list: unknown[], lines: string[], plan = NO_FIELDS) {
  const { chain, failures } = chainOf(list);
  const shape = eventShape(plan, META);
  const out: unknown[] = [];
  for (const line of lines) {
    const event = chain.apply(shape.fromValue(JSON.parse(line)));
    if (event) out.push(JSON.parse(JSON.stringify(event)));
  }
  return { out, failures, stats: chain.takeStats() };
}

describe('actions on JSON lines as bytes', () => {
  it('a filter, set, remove and rename chain gives what the object path gives, without parsing the lines', () => {
    const list = [
      { filter: 'event.status >= 201' },
      { set: { latency_s: 'event.latency_ms / 1000.0', route: 'event.service + ":" + event.path' } },
      { remove: ['message'] },
      { rename: { request_id: 'id' } },
    ];
    const lines = [
      '{"status":200,"latency_ms":5,"service":"api","path":"/a","message":"m","request_id":"r1"}',
      '{ "status" : 503 , "latency_ms":1500,"service":"api","path":"/b\\u00e9","message":"m","request_id":"r2","id":"old"}',
      '{"status":201,"latency_ms":7,"service":"api","path":"/c","nested":{"message":"stays"}}',
      '{"status":404,"service":"api","path":"/d","latency_ms":3}',
    ];
    const lined = throughLines(list, lines);
    expect(lined.lines).toBeDefined();
    expect(lined.refused).toBe(0);
    expect(lined.out).toEqual([
      {
        status: 503,
        latency_ms: 1500,
        service: 'api',
        path: '/bé',
        id: 'r2',
        latency_s: 1.5,
        route: 'api:/bé',
      },
      {
        status: 201,
        latency_ms: 7,
        service: 'api',
        path: '/c',
        nested: { message: 'stays' },
        latency_s: 0.007,
        route: 'api:/c',
      },
      { status: 404, service: 'api', path: '/d', latency_ms: 3, latency_s: 0.003, route: 'api:/d' },
    ]);
    expect(lined.count).toBe(3);
    expect(lined.stats).toEqual({ events_in: 4, events_out: 3, dropped: [1, 0, 0, 0], errors: [0, 0, 0, 0] });
    expect(lined.out).toEqual(throughObjects(list, lines).out);
  });

  it('an evaluation error drops the line and is reported with the action and field, as on objects', () => {
    const list = [{ set: { route: 'event.service + event.path' } }, { filter: 'event.ok' }];
    const lines = [
      '{"service":"a","path":1,"ok":true}',
      '{"service":"a","path":"/x","ok":"yes"}',
      '{"service":"a","path":"/y","ok":true}',
    ];
    const lined = throughLines(list, lines);
    const objects = throughObjects(list, lines);
    expect(lined.out).toEqual([{ service: 'a', path: '/y', ok: true, route: 'a/y' }]);
    expect(lined.failures).toEqual(objects.failures);
    expect(lined.failures.map((f) => [f.action, f.field])).toEqual([
      [0, 'route'],
      [1, undefined],
    ]);
    expect(lined.stats).toEqual(objects.stats);
  });

  it("an evaluation error's reason never quotes the event's values, on lines and on objects", () => {
    const secret = 'SENSITIVE-VALUE-123';
    const line = JSON.stringify({ msg: secret });
    const cases: [unknown[], RegExp][] = [
      [[{ set: { x: 'duration(event.msg)' } }], /invalid duration/],
      [[{ set: { x: 'event[event.msg]' } }], /no such key/],
      [[{ set: { x: '{"a": 1}[event.msg]' } }], /no such key/],
    ];
    for (const [list, reason] of cases) {
      for (const { failures } of [throughLines(list, [line]), throughObjects(list, [line])]) {
        expect(failures, JSON.stringify(list)).toHaveLength(1);
        expect(failures[0]!.reason, JSON.stringify(list)).toMatch(reason);
        expect(JSON.stringify(failures), JSON.stringify(list)).not.toContain(secret);
      }
    }
  });

  it('the step budget of list macros and the size of a set value hold on lines as on objects', () => {
    // 3,000 × 3,000 numbers: 9 million, at least 18 MB of JSON.
    const line = JSON.stringify({ xs: Array.from({ length: 3000 }, (_, i) => i) });
    const cases: [unknown[], RegExp][] = [
      [[{ set: { n: 'event.xs.map(x, event.xs.filter(y, y == x)).size()' } }], /more than 1,000,000 steps/],
      [[{ set: { square: 'event.xs.map(x, event.xs)' } }], /larger than 8 MiB of JSON/],
    ];
    for (const [list, reason] of cases) {
      const lined = throughLines(list, [line]);
      expect(lined.refused, JSON.stringify(list)).toBe(0);
      expect(lined.failures.map((f) => f.reason)).toEqual(
        throughObjects(list, [line]).failures.map((f) => f.reason),
      );
      expect(lined.failures).toHaveLength(1);
      expect(lined.failures[0]!.reason).toMatch(reason);
    }
  });

  it('a line that repeats a key the actions touch takes the parsed path (the last value wins, as in JSON.parse)', () => {
    const list = [{ filter: 'event.a > 1' }];
    const lines = ['{"a":5,"a":0}', '{"a":0,"a":5}'];
    const lined = throughLines(list, lines);
    expect(lined.refused).toBe(2);
    expect(lined.out).toEqual([{ a: 5 }]);
  });

  it('chains that need whole events, and jobs whose metadata fields the actions touch, use the object path', () => {
    expect(chainOf([{ remove: ['http.status'] }]).chain.lines).toBeUndefined();
    expect(chainOf([{ filter: 'size(event) > 2' }]).chain.lines).toBeUndefined();
    expect(chainOf([{ filter: '"a" in event' }]).chain.lines).toBeUndefined();
    expect(chainOf([{ 'parse-json': 'body' }]).chain.lines).toBeUndefined();
    expect(chainOf([{ filter: 'event["a"] == 1 && has(event.b)' }]).chain.lines?.wanted.toSorted()).toEqual([
      'a',
      'b',
    ]);

    const list = [{ set: { seen: 'event.object' } }, { rename: { object: 'file' } }];
    const lines = ['{"x":1}'];
    const lined = throughLines(list, lines, OBJECT_FIELD);
    expect(lined.refused).toBe(1);
    expect(lined.out).toEqual([{ x: 1, seen: 'logs/a.json', file: 'logs/a.json' }]);
    expect(lined.out).toEqual(throughObjects(list, lines, OBJECT_FIELD).out);
    // Untouched metadata is spliced after the edited line.
    const kept = throughLines([{ remove: ['x'] }], ['{"x":1,"y":2}', '{"x":1}'], OBJECT_FIELD);
    expect(kept.refused).toBe(0);
    expect(kept.out).toEqual([{ y: 2, object: 'logs/a.json' }, { object: 'logs/a.json' }]);
  });

  it('fuzz: random lines through random top-level chains give the object path events, counts and errors', () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    // Field paths of actions are ASCII; lines also have other names.
    const FIELDS = ['a', 'b', 'c', 'd', 'status', 'msg', 'x-y'];
    const NAMES = [...FIELDS, 'é'];
    const value = (depth = 0): unknown => {
      switch (Math.floor(random() * (depth > 1 ? 5 : 7))) {
        case 0:
          return Math.floor(random() * 1000) - 200;
        case 1:
          return Math.round(random() * 1e6) / 1000 + 0.5;
        case 2:
          return pick(['', 'text', 'tab\there', 'quote"d', 'ünï', '\\slash', 'line\nbreak']);
        case 3:
          return pick([true, false, null]);
        case 4:
          return pick([1, 2, 3]);
        case 5:
          return { [pick(NAMES)]: value(depth + 1), k: [value(depth + 1)] };
        default:
          return [value(depth + 1), value(depth + 1)];
      }
    };
    const line = (): string => {
      const members: string[] = [];
      const count = Math.floor(random() * 6);
      for (let m = 0; m < count; m++) {
        const name = pick(NAMES);
        const key =
          random() < 0.05
            ? JSON.stringify(name).replace(/[a-z]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
            : JSON.stringify(name);
        const space = random() < 0.2 ? ' ' : '';
        members.push(`${space}${key}${space}:${space}${JSON.stringify(value())}`);
      }
      return `{${members.join(',')}}`;
    };
    const expressions = [
      'event.a > 1',
      'has(event.b)',
      'event.status == 200 || event.status == 500',
      'event.c + 1',
      'event.d + "!"',
      // Joins of string fields and literals are written as the line's bytes (line-chain.ts).
      'event.msg + "-é\\"" + event.d',
      '"<" + event.b',
      'string(event.a)',
      'event.?b.orValue(0)',
      'job + ":" + worker',
      'event["x-y"] != null',
      '[event.a, event.b]',
      '{"m": event.msg}',
      'true',
    ];
    // Bool expressions, and one of type dyn that may not be a bool on a line.
    const filters = [
      'event.a > 1',
      'has(event.b)',
      'event.status == 200 || event.status == 500',
      'event["x-y"] != null',
      'event.?b.orValue(0) == 0',
      'event.c',
      'true',
    ];
    const chain = (): unknown[] => {
      const list: unknown[] = [];
      const steps = 1 + Math.floor(random() * 4);
      for (let s = 0; s < steps; s++) {
        const kind = pick(['filter', 'set', 'remove', 'rename', 'keep']);
        if (kind === 'filter') list.push({ filter: pick(filters) });
        else if (kind === 'set')
          list.push({ set: { [pick(FIELDS)]: pick(expressions), [pick(FIELDS)]: pick(expressions) } });
        else if (kind === 'remove') list.push({ remove: [pick(FIELDS), pick(FIELDS)] });
        else if (kind === 'rename')
          list.push({ rename: { [pick(FIELDS)]: pick(FIELDS), [pick(FIELDS)]: pick(FIELDS) } });
        else list.push({ keep: [pick(FIELDS), pick(FIELDS), pick(FIELDS)] });
      }
      return list;
    };
    let lineChains = 0;
    for (let round = 0; round < 300; round++) {
      const list = chain();
      const lines = Array.from({ length: 30 }, line);
      const lined = throughLines(list, lines);
      const objects = throughObjects(list, lines);
      const context = `seed ${seed}, round ${round}: ${JSON.stringify(list)}\n${lines.join('\n')}`;
      if (lined.lines) lineChains++;
      expect(lined.out, context).toEqual(objects.out);
      expect(lined.stats, context).toEqual(objects.stats);
      expect(lined.failures, context).toEqual(objects.failures);
    }
    // The fuzz is about the line path: most chains must take it.
    expect(lineChains).toBeGreaterThan(200);
  });
});
