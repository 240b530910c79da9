/**
 * The fast path of CEL (cel-fast.ts) gives what the library gives: a seeded fuzz of random
 * expressions over random events, each evaluated by the library and by the fast path (the
 * library again where the fast path steps aside), compared value by value and error by error.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom, testSeed } from '../../../test/helpers/random.ts';
import { type CelVariables, compileCel } from './cel.ts';
import { NOT_HERE } from './cel-fast.ts';

const FIELDS = ['a', 'b', 's', 't'];

type Outcome = { value: unknown } | { error: string };

function outcome(run: () => unknown): Outcome {
  try {
    return { value: run() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The expression the way the line chain runs it: fast, and the library where the fast path steps aside. */
function viaFastPath(source: string, event: Record<string, unknown>) {
  const compiled = compileCel(source);
  if (!compiled.ok) throw new Error(`${source}: ${compiled.message}`);
  const variables: CelVariables = { event, job: 'job-1', worker: 'w-1' };
  const reference = outcome(() => compiled.program(variables));
  let decided = false;
  const fast = outcome(() => {
    if (!compiled.fast) return compiled.program(variables);
    try {
      const value = compiled.fast(
        compiled.eventFields!.map((field) => event[field]),
        'job-1',
        'w-1',
      );
      decided = true;
      return value;
    } catch (err) {
      if (err !== NOT_HERE) throw err;
      return compiled.program(variables);
    }
  });
  return { reference, fast, decided, hasFast: compiled.fast !== undefined };
}

describe('CEL fast path', () => {
  it('decides the common expressions itself, with the values the library gives', () => {
    const event = { status: 503, latency_ms: 250, service: 'api', path: '/v1', ok: true };
    for (const [source, expected] of [
      ['event.status >= 201', true],
      ['event.latency_ms / 1000.0', 0.25],
      ['event.service + ":" + event.path', 'api:/v1'],
      ['event.status == 503 && !event.ok || job == "job-1"', true],
      ['event.status > 500 ? "server" : worker', 'server'],
      ['-event.latency_ms * 2.0', -500],
      ['7 % 3 + 2 * (1 - 4)', -5n],
    ] as const) {
      const result = viaFastPath(source, event);
      expect(result.decided, source).toBe(true);
      expect(result.fast, source).toEqual({ value: expected });
      expect(result.reference, source).toEqual({ value: expected });
    }
  });

  it('steps aside for what CEL decides otherwise: missing fields, mixed types, overflow, division by zero', () => {
    const event = { status: 503, name: 'x', nested: { a: 1 } };
    for (const source of [
      'event.missing == 1',
      'event.status + 1',
      'event.name > 3',
      '9223372036854775807 + 1',
      '1 / 0',
      'event.nested == event.nested',
      'event.missing || true',
      'event.name < "y"',
    ]) {
      const result = viaFastPath(source, event);
      expect(result.decided, source).toBe(false);
      expect(result.fast, source).toEqual(result.reference);
    }
    expect(viaFastPath('event.missing || true', event).fast).toEqual({ value: true });
    expect('error' in viaFastPath('event.status + 1', event).fast).toBe(true);
  });

  it('fuzz: random expressions over random events give the library’s values and errors', () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const literal = () =>
      pick([
        // Few distinct values, so that operands are often equal.
        () => String(Math.floor(random() * 5) - 2),
        () => pick(['-1.5', '-1.0', '0.5', '1.0', '2.0', '2.25']),
        () => '9223372036854775807',
        () => '0',
        () => '0.0',
        () => `"${pick(['', 'a', 'b', 'ab', 'é', '😀'])}"`,
        () => pick(['true', 'false', 'null']),
        () => pick(['job', 'worker']),
      ])();
    const expression = (depth: number): string => {
      if (depth <= 0 || random() < 0.25) return random() < 0.6 ? `event.${pick(FIELDS)}` : literal();
      const left = expression(depth - 1);
      const right = expression(depth - 1);
      switch (Math.floor(random() * 5)) {
        case 0:
          return `(${left} ${pick(['==', '!=', '<', '<=', '>', '>='])} ${right})`;
        case 1:
          return `(${left} ${pick(['+', '-', '*', '/', '%'])} ${right})`;
        case 2:
          return `(${left} ${pick(['&&', '||'])} ${right})`;
        case 3:
          return `(${pick(['!', '-'])}${left})`;
        default:
          return `(${left} ? ${right} : ${expression(depth - 1)})`;
      }
    };
    const value = () =>
      pick([
        () => Math.floor(random() * 5) - 2,
        () => pick([-1.5, -1, 0.5, 1, 2, 2.25, -0]),
        () => Number.NaN,
        () => 2 ** 60,
        () => pick(['', 'a', 'b', 'ab', 'é', '😀']),
        () => random() < 0.5,
        () => null,
        () => ({ k: 1 }),
        () => [1, 2],
        () => undefined,
      ])();
    let decided = 0;
    let checked = 0;
    for (let i = 0; i < 10_000; i++) {
      const source = expression(3);
      const compiled = compileCel(source);
      if (!compiled.ok) continue; // a type error the checker finds statically
      for (let e = 0; e < 5; e++) {
        const event: Record<string, unknown> = {};
        for (const field of FIELDS) {
          const v = value();
          if (v !== undefined) event[field] = v;
        }
        const result = viaFastPath(source, event);
        checked++;
        if (result.decided) decided++;
        expect(result.fast, `seed ${seed}: ${source} over ${JSON.stringify(event)}`).toEqual(
          result.reference,
        );
      }
    }
    // The fuzz reaches both sides: cases the fast path decides, and cases it gives back.
    expect(decided, `seed ${seed}`).toBeGreaterThan(checked / 20);
    expect(decided, `seed ${seed}`).toBeLessThan(checked);
  });
});
