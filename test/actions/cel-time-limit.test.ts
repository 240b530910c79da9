/**
 * One event's expressions are bounded in time, not only in steps of list macros: a step
 * may scan a long string (`event.xs.exists(x, event.s.contains("zq"))` over a 4 MiB `s`
 * and a million `xs` passed validation and took 52 s of a core, deaf to a stop). Past
 * MAX_EVENT_EVALUATION_MS the event fails with an evaluation error, reported as any other
 * (`job-errors`, `action-evaluation-error`), counted, and the object's next lines go on,
 * read on the main thread as on the read threads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileActionChain } from '../../functions/runner/actions/chain.ts';
import { withActions } from '../../functions/runner/actions/with-actions.ts';
import { ReadPool } from '../../functions/runner/cores/read-pool.ts';
import { createGcsInput } from '../../functions/runner/inputs/gcs/index.ts';
import type { JsonLines, RunReport } from '../../functions/runner/types.ts';
import { compileCel, MAX_EVENT_EVALUATION_MS } from '../../shared/job/actions/cel.ts';
import { type GcsTestEnv, gcsJob, gcsTestEnv, memoryFingerprints, memoryWatermarks } from '../gcs/helpers.ts';
import { validActions } from '../helpers/actions.ts';

const FILTER = 'event.xs.exists(x, event.s.contains("zq"))';
/** Within the step limit (10^6), but each step scans 2 MiB: tens of seconds without a time limit. */
const slowEvent = () => ({ s: 'a'.repeat(2 << 20), xs: new Array(500_000).fill(0) });
/** The time limit, and what a busy machine adds to it. */
const BOUND_MS = MAX_EVENT_EVALUATION_MS + 1_500;

class NamingPool extends ReadPool {
  names: string[] = [];
  override read(...args: Parameters<ReadPool['read']>): ReturnType<ReadPool['read']> {
    this.names.push(args[0].meta.name);
    return super.read(...args);
  }
}

describe('the time one event’s expressions may take', () => {
  it('fails an expression that scans a long string at every step, within the limit, with its reason', () => {
    const compiled = compileCel(FILTER);
    if (!compiled.ok) throw new Error(compiled.message);
    const started = performance.now();
    expect(() => compiled.program({ event: slowEvent(), job: 'j', worker: 'w' })).toThrow(
      `took more than ${MAX_EVENT_EVALUATION_MS} ms`,
    );
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    // The next evaluation has a budget of its own.
    expect(compiled.program({ event: { s: 'azq', xs: [0] }, job: 'j', worker: 'w' })).toBe(true);
  });

  it('fails the event, not the chain: counted, reported, and the next event goes on', () => {
    const failures: { action: number; reason: string }[] = [];
    const chain = compileActionChain(validActions([{ filter: FILTER }, { set: { ok: 'true' } }]), {
      onError: (failure) => failures.push(failure),
    });
    chain.bind({ job: 'j', worker: 'w' });
    const started = performance.now();
    expect(chain.apply(slowEvent())).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    expect(chain.apply({ s: 'zq', xs: [0] })).toEqual({ s: 'zq', xs: [0], ok: true });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ action: 0, kind: 'filter' });
    expect(failures[0]!.reason).toContain(`took more than ${MAX_EVENT_EVALUATION_MS} ms`);
    expect(chain.takeStats()).toEqual({ events_in: 2, events_out: 1, dropped: [0, 0], errors: [1, 0] });
  });

  it('a macro whose errors do not end it (`exists || true`) still stops working at the limit', () => {
    const compiled = compileCel(`event.xs.exists(x, event.xs.exists(y, event.s.contains("zq"))) || true`);
    if (!compiled.ok) throw new Error(compiled.message);
    const started = performance.now();
    // CEL's `||` takes `true` over an error: the event passes, after the limit, not after 10^6 scans.
    expect(
      compiled.program({
        event: { s: 'a'.repeat(1 << 20), xs: new Array(1000).fill(0) },
        job: 'j',
        worker: 'w',
      }),
    ).toBe(true);
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
  });
});

describe('a slow event in a run of the gcs input', () => {
  let env: GcsTestEnv;
  const pool = new NamingPool(2);
  const fast = (i: number) => JSON.stringify({ s: `zq-${i}`, xs: [i] });
  const object = () => [fast(1), JSON.stringify(slowEvent()), fast(2), fast(3), ''].join('\n');

  beforeAll(async () => {
    env = await gcsTestEnv();
    await env.put('one/slow.json', object());
    await env.put('two/a-slow.json', object());
    await env.put('two/b-fast.json', `${fast(4)}\n`);
  });
  afterAll(async () => {
    await pool.close();
    await env.stop();
  });

  async function run(prefix: string, readPool: ReadPool | null) {
    const input = withActions(
      createGcsInput(gcsJob(env.bucket, { 'object-names': [prefix] }), {
        storage: env.storage,
        baseDelayMs: 5,
        readPool,
      }),
      { actions: validActions([{ filter: FILTER }]) },
    );
    const reports: RunReport[] = [];
    const lines: string[] = [];
    const started = performance.now();
    await input.run(
      {
        job: 'job-a',
        worker: 'test',
        signal: new AbortController().signal,
        fingerprints: memoryFingerprints(),
        watermarks: memoryWatermarks(),
        report: (r) => reports.push(r),
        deliverJsonLines: async (batch: JsonLines) => {
          lines.push(...Buffer.concat(batch.chunks).toString().split('\n').slice(0, -1));
        },
      },
      async () => {
        throw new Error('events go on as JSON lines');
      },
    );
    const ms = performance.now() - started;
    const errors = reports
      .filter((r) => r.type === 'job-errors')
      .map((r) => r.payload as Record<string, unknown>);
    const metrics = reports
      .map((r) => (r.payload as { actions?: Record<string, unknown> }).actions)
      .find((a) => a !== undefined);
    return { ms, lines: lines.map((l) => JSON.parse(l).s).sort(), errors, metrics };
  }

  it('on the main thread (no read threads): the event fails within the limit, the next lines go on', {
    timeout: 120_000,
  }, async () => {
    const { ms, lines, errors, metrics } = await run('one/', null);
    expect(ms).toBeLessThan(BOUND_MS + 1_500);
    expect(lines).toEqual(['zq-1', 'zq-2', 'zq-3']);
    expect(errors).toEqual([
      {
        reason: 'action-evaluation-error',
        action: 0,
        kind: 'filter',
        message: expect.stringContaining(`took more than ${MAX_EVENT_EVALUATION_MS} ms`),
      },
    ]);
    expect(metrics).toMatchObject({ events_in: 4, events_out: 3, evaluation_errors: 1 });
  });

  it('on a read thread: the same', { timeout: 120_000 }, async () => {
    const { ms, lines, errors, metrics } = await run('two/', pool);
    expect(pool.names).toContain('two/a-slow.json');
    expect(ms).toBeLessThan(BOUND_MS + 1_500);
    expect(lines).toEqual(['zq-1', 'zq-2', 'zq-3', 'zq-4']);
    expect(errors).toEqual([
      {
        reason: 'action-evaluation-error',
        action: 0,
        kind: 'filter',
        message: expect.stringContaining(`took more than ${MAX_EVENT_EVALUATION_MS} ms`),
      },
    ]);
    expect(metrics).toMatchObject({ events_in: 5, events_out: 4, evaluation_errors: 1 });
  });
});
