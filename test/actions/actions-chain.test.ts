/**
 * The compiled action chain on events: every kind, dotted paths, missing fields,
 * evaluation errors (dropped, counted, reported with the action's index and field), RE2
 * for `matches`, and a seeded fuzz of random events through random chains compared with
 * a plain-JavaScript reference of the same actions.
 */
import { describe, expect, it } from 'vitest';
import { type ActionFailure, compileActionChain } from '../../functions/runner/actions/chain.ts';
import { validActions } from '../helpers/actions.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';

type Json = Record<string, unknown>;

const actions = validActions;

function run(list: unknown[], events: Json[]) {
  const failures: ActionFailure[] = [];
  const chain = compileActionChain(actions(list), { onError: (f) => failures.push(f) });
  chain.bind({ job: 'job-1', worker: 'w-1' });
  const out = events.map((e) => chain.apply(structuredClone(e)) ?? null);
  return { out, failures, stats: chain.takeStats() };
}

describe('actions: each kind', () => {
  it('filter keeps true, drops false, and counts per filter', () => {
    const { out, stats } = run(
      [{ filter: 'event.status >= 500' }, { filter: 'job == "job-1" && worker.startsWith("w-")' }],
      [{ status: 500 }, { status: 200 }, { status: 503 }],
    );
    expect(out).toEqual([{ status: 500 }, null, { status: 503 }]);
    expect(stats).toEqual({ events_in: 3, events_out: 2, dropped: [1, 0], errors: [0, 0] });
  });

  it('set evaluates on the event before the action, creates maps for dotted paths, and writes JSON values', () => {
    const { out } = run(
      [
        {
          set: {
            status: 'int(event.status) + 1',
            'http.code': 'event.status',
            'http.big': '9007199254740993',
            where: 'job + "@" + worker',
            bytes: 'b"hi"',
            when: 'timestamp("2026-03-01T12:00:00Z")',
            list: '[1, 2]',
            copy: 'event.nested',
          },
        },
        { set: { 'nested.x': '2.0' } },
      ],
      [{ status: 200, nested: { x: 1 } }],
    );
    expect(out).toEqual([
      {
        status: 201,
        http: { code: 200, big: '9007199254740993' },
        where: 'job-1@w-1',
        bytes: 'aGk=',
        when: '2026-03-01T12:00:00.000Z',
        list: [1, 2],
        copy: { x: 1 },
        nested: { x: 2 },
      },
    ]);
  });

  it('remove, rename and keep take dotted paths and ignore missing fields', () => {
    const { out } = run(
      [
        { remove: ['debug', 'http.headers', 'nothing.here'] },
        { rename: { msg: 'message', 'http.status': 'status', absent: 'x' } },
        { keep: ['message', 'status', 'http.method', 'gone'] },
      ],
      [
        {
          msg: 'hi',
          debug: true,
          http: { status: 404, headers: { a: 1 }, method: 'GET', path: '/' },
          other: 1,
        },
      ],
    );
    expect(out).toEqual([{ message: 'hi', status: 404, http: { method: 'GET' } }]);
  });

  it('top-level renames replace a field of the new name, in either key order', () => {
    const { out } = run(
      [{ rename: { a: 'b', c: 'd' } }],
      [{ b: 'old', a: 'new' }, { a: 1, b: 2, d: 3 }, { b: 2 }],
    );
    expect(out).toEqual([{ b: 'new' }, { b: 1, d: 3 }, { b: 2 }]);
  });

  it('parse-json turns JSON text into its value and leaves other values alone', () => {
    const { out, failures } = run(
      [{ 'parse-json': 'payload' }],
      [{ payload: '{"a":[1,{"b":null}]}' }, { payload: 3 }, {}, { payload: 'not json' }],
    );
    expect(out).toEqual([{ payload: { a: [1, { b: null }] } }, { payload: 3 }, {}, null]);
    expect(failures).toEqual([
      { action: 0, kind: 'parse-json', field: 'payload', reason: 'the field does not hold JSON text' },
    ]);
  });

  it('parse-timestamp reads strftime and RFC 3339 into RFC 3339 UTC', () => {
    const { out, failures } = run(
      [
        { 'parse-timestamp': { field: 'apache', format: '%d/%b/%Y:%H:%M:%S %z' } },
        { 'parse-timestamp': { field: 'iso', format: 'rfc3339' } },
        { 'parse-timestamp': { field: 'epoch', format: '%s' } },
      ],
      [
        { apache: '10/Oct/2000:13:55:36 -0700', iso: '2026-03-01T13:00:00.123456+01:00', epoch: '86400' },
        { apache: '31/Feb/2000:13:55:36 -0700' },
        { iso: 5 },
      ],
    );
    expect(out).toEqual([
      {
        apache: '2000-10-10T20:55:36.000Z',
        iso: '2026-03-01T12:00:00.123Z',
        epoch: '1970-01-02T00:00:00.000Z',
      },
      null,
      null,
    ]);
    expect(failures.map((f) => [f.action, f.field])).toEqual([
      [0, 'apache'],
      [1, 'iso'],
    ]);
  });
});

describe('actions: evaluation errors', () => {
  it('a missing field, a type mismatch or a bad path drops the event, counts it, and names the action and field without values', () => {
    const { out, failures, stats } = run(
      [
        { filter: 'event.secret_value != "x"' },
        { set: { n: 'event.n + 1' } },
        { set: { 'name.first': '"a"' } },
      ],
      [{}, { secret_value: 'hunter2', n: 1 }, { secret_value: 'hunter2', n: 1.0, name: 'text' }],
    );
    expect(out).toEqual([null, null, null]);
    expect(stats.errors).toEqual([1, 2, 0]);
    expect(failures).toEqual([
      { action: 0, kind: 'filter', reason: 'No such key: secret_value' },
      { action: 1, kind: 'set', field: 'n', reason: 'no such overload: dyn<double> + int' },
      { action: 1, kind: 'set', field: 'n', reason: 'no such overload: dyn<double> + int' },
    ]);
    expect(JSON.stringify(failures)).not.toContain('hunter2');
  });

  it('has() and optional fields read missing fields without an error', () => {
    const { out, stats } = run(
      [
        { filter: '!has(event.user) || event.user != "root"' },
        { set: { who: 'event.?user.orValue("nobody")' } },
      ],
      [{}, { user: 'root' }, { user: 'ann' }],
    );
    expect(out).toEqual([{ who: 'nobody' }, null, { user: 'ann', who: 'ann' }]);
    expect(stats.errors).toEqual([0, 0]);
  });

  it('an evaluation takes at most 1,000,000 steps of list macros, however large the lists', () => {
    const xs = (n: number) => Array.from({ length: n }, (_, i) => i);
    const nested = 'event.xs.map(x, event.xs.filter(y, y == x)).size()';
    const { out, failures, stats } = run(
      [{ set: { n: nested } }, { filter: 'event.xs.exists(x, event.xs.exists(y, y < 0)) == false' }],
      // 2,000 × 2,000 steps each: over the budget; 900 × 900 (+ 900) is under it.
      [{ xs: xs(2000) }, { xs: xs(900), id: 'small' }, { xs: xs(2000), n: 1 }],
    );
    expect(out.map((e) => e && { n: e.n, id: e.id })).toEqual([null, { n: 900, id: 'small' }, null]);
    expect(stats.errors).toEqual([2, 0]);
    expect(failures).toHaveLength(2);
    for (const failure of failures)
      expect(failure.reason).toMatch(/more than 1,000,000 steps of list macros/);
    // One level over a list under the budget is fine, and the count starts again per event.
    const flat = run([{ filter: 'event.xs.all(x, x >= 0)' }], [{ xs: xs(600_000) }, { xs: xs(600_000) }]);
    expect(flat.stats.events_out).toBe(2);
  });

  it('set refuses a value JSON cannot hold or larger than an event may be, and writes CEL values as JSON', () => {
    const xs = Array.from({ length: 3000 }, (_, i) => i);
    const { out, failures } = run(
      [{ set: { square: 'event.xs.map(x, event.xs)' } }, { set: { ratio: 'event.a / event.b' } }],
      [
        { xs, a: 1.0, b: 2.0 },
        { xs: [1, 2], a: 1.0, b: 0.0 },
        { xs: [1], a: 0.0, b: 0.0 },
      ],
    );
    expect(out.map((e) => e?.ratio ?? null)).toEqual([null, null, null]);
    expect(failures.map((f) => f.reason)).toEqual([
      'the value is larger than 8 MiB of JSON, the most an event may hold',
      'the value is Infinity, which JSON cannot hold (check for a division by zero)',
      'the value is NaN, which JSON cannot hold (check for a division by zero)',
    ]);
    const forms = run(
      [
        {
          set: {
            u: 'uint(5)',
            big: 'uint(18446744073709551615)',
            some: 'optional.of("x")',
            none: 'optional.none()',
            t: 'type(1.5)',
            d: 'duration("1.5s")',
          },
        },
      ],
      [{}],
    );
    expect(forms.failures).toEqual([]);
    expect(forms.out).toEqual([
      { u: 5, big: '18446744073709551615', some: 'x', none: null, t: 'double', d: '1.5s' },
    ]);
  });

  it('matches runs on RE2: a catastrophic pattern for a backtracking engine takes linear time', () => {
    const started = performance.now();
    const { out } = run(
      [{ filter: 'event.s.matches("^(a+)+$")' }],
      [{ s: `${'a'.repeat(5000)}b` }, { s: 'aaa' }],
    );
    expect(out).toEqual([null, { s: 'aaa' }]);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

// ---- fuzz: random events through random chains, against a plain-JavaScript reference ----

const FIELDS = ['a', 'b', 'c', 'n.x', 'n.y', 'm.k'];
const TOP = ['a', 'b', 'c', 'n', 'm'];
const STRINGS = ['s1', 's2', '{"q":1}', 'nope', '2026-03-01T12:00:00Z', '2026-03-01T13:00:00+01:00'];

type Ref = { kind: string; apply: (e: Json) => Json | 'drop' | 'error' };

function fuzzCase(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const value = (depth = 0): unknown => {
    const r = random();
    if (r < 0.3) return Math.floor(random() * 3);
    if (r < 0.6) return pick(STRINGS);
    if (r < 0.7) return null;
    if (r < 0.8 && depth < 2) return { x: value(depth + 1), y: value(depth + 1) };
    return random() < 0.5;
  };
  const event = (): Json => {
    const e: Json = {};
    for (const f of TOP) if (random() < 0.6) e[f] = value();
    return e;
  };
  const subset = () => FIELDS.filter(() => random() < 0.3).concat(pick(FIELDS));
  const specs: { spec: unknown; ref: Ref }[] = [];
  const count = 1 + Math.floor(random() * 5);
  for (let i = 0; i < count; i++) {
    const kind = pick(['filter', 'set', 'remove', 'rename', 'keep', 'parse-json', 'parse-timestamp']);
    const f = pick(TOP);
    if (kind === 'filter') {
      const s = pick(STRINGS);
      if (random() < 0.5)
        specs.push({
          spec: { filter: `has(event.${f})` },
          ref: { kind, apply: (e) => (Object.hasOwn(e, f) ? e : 'drop') },
        });
      else
        specs.push({
          spec: { filter: `event.${f} == ${JSON.stringify(s)}` },
          ref: { kind, apply: (e) => (!Object.hasOwn(e, f) ? 'error' : e[f] === s ? e : 'drop') },
        });
    } else if (kind === 'set') {
      const to = pick(FIELDS);
      specs.push({
        spec: { set: { [to]: `event.?${f}.orValue("none")`, w: 'job + worker' } },
        ref: {
          kind,
          apply: (e) => {
            const v = Object.hasOwn(e, f) ? structuredClone(e[f]) : 'none';
            return refSet(refSet(e, to, v), 'w', 'job-1w-1');
          },
        },
      });
    } else if (kind === 'remove') {
      const paths = subset();
      specs.push({
        spec: { remove: paths },
        ref: {
          kind,
          apply: (e) => {
            for (const p of paths) refDelete(e, p);
            return e;
          },
        },
      });
    } else if (kind === 'rename') {
      const pairs: Record<string, string> = {};
      for (const from of subset()) pairs[from] = pick(FIELDS);
      specs.push({
        spec: { rename: pairs },
        ref: {
          kind,
          apply: (e) => {
            for (const [from, to] of Object.entries(pairs)) {
              const v = refGet(e, from);
              if (v === undefined) continue;
              refDelete(e, from);
              if (refSet(e, to, v) === 'error') return 'error';
            }
            return e;
          },
        },
      });
    } else if (kind === 'keep') {
      const paths = subset();
      specs.push({
        spec: { keep: paths },
        ref: {
          kind,
          apply: (e) => {
            const out: Json = {};
            for (const p of paths) {
              const v = refGet(e, p);
              if (v !== undefined) refSet(out, p, v);
            }
            return out;
          },
        },
      });
    } else if (kind === 'parse-json') {
      specs.push({
        spec: { 'parse-json': f },
        ref: {
          kind,
          apply: (e) => {
            if (typeof e[f] !== 'string') return e;
            try {
              e[f] = JSON.parse(e[f] as string);
              return e;
            } catch {
              return 'error';
            }
          },
        },
      });
    } else {
      specs.push({
        spec: { 'parse-timestamp': { field: f, format: 'rfc3339' } },
        ref: {
          kind,
          apply: (e) => {
            if (!Object.hasOwn(e, f)) return e;
            const t = e[f];
            if (typeof t !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(t))
              return 'error';
            e[f] = new Date(t).toISOString();
            return e;
          },
        },
      });
    }
  }
  return { specs, events: Array.from({ length: 20 }, event) };
}

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function refGet(e: Json, path: string): unknown {
  let v: unknown = e;
  for (const s of path.split('.')) {
    if (!isMap(v) || !Object.hasOwn(v, s)) return undefined;
    v = v[s];
  }
  return v;
}

function refSet(e: Json | 'error', path: string, value: unknown): Json | 'error' {
  if (e === 'error') return e;
  const parts = path.split('.');
  let t = e;
  for (const s of parts.slice(0, -1)) {
    if (t[s] === undefined || t[s] === null) t[s] = {};
    if (!isMap(t[s])) return 'error';
    t = t[s] as Json;
  }
  t[parts.at(-1)!] = value;
  return e;
}

function refDelete(e: Json, path: string): void {
  const parts = path.split('.');
  const parent = parts.length === 1 ? e : refGet(e, parts.slice(0, -1).join('.'));
  if (isMap(parent)) delete parent[parts.at(-1)!];
}

describe('actions: fuzz against a plain-JavaScript reference', () => {
  it('random events through random chains give the same events, drops and errors', () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    for (let round = 0; round < 300; round++) {
      const { specs, events } = fuzzCase(random);
      const { out, stats } = run(
        specs.map((s) => s.spec),
        events,
      );
      let errors = 0;
      let dropped = 0;
      const expected = events.map((original) => {
        let e: Json = structuredClone(original);
        for (const { ref } of specs) {
          const next = ref.apply(e);
          if (next === 'drop') {
            dropped++;
            return null;
          }
          if (next === 'error') {
            errors++;
            return null;
          }
          e = next;
        }
        return e;
      });
      const context = `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed}), round ${round}, actions ${JSON.stringify(specs.map((s) => s.spec))}`;
      expect(out, context).toEqual(expected);
      expect(
        stats.errors.reduce((a, b) => a + b, 0),
        context,
      ).toBe(errors);
      expect(
        stats.dropped.reduce((a, b) => a + b, 0),
        context,
      ).toBe(dropped);
    }
  });
});
