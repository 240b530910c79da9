/**
 * A damaged object (a gzip cut short, as an interrupted upload leaves it): its first events
 * come out, then the read fails. It was never fingerprinted, so every run read it again and
 * delivered the same events again, for ever (three runs of a fingerprinting job printed the
 * same 49,725 events three times). Now it is reported once as damaged, with how many of its
 * events were delivered, and done with like a read object until it is rewritten: on the main
 * thread and on the read threads alike.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ReadPool } from '../../functions/runner/cores/read-pool.ts';
import { type GcsTestEnv, gcsTestEnv, memoryFingerprints } from './helpers.ts';

let env: GcsTestEnv;
const pool = new ReadPool(2);
const lines = (n: number, object: number) =>
  `${Array.from({ length: n }, (_, i) => JSON.stringify({ object, i })).join('\n')}\n`;
/** A gzip object cut in half: what an interrupted upload leaves. */
const cutShort = (object: number) => {
  const whole = gzipSync(lines(20_000, object));
  return whole.subarray(0, Math.floor(whole.length / 2));
};

beforeAll(async () => {
  env = await gcsTestEnv();
  await env.put('alone/cut.json.gz', cutShort(0));
  // Several objects go to the read threads (one alone is read on the main thread).
  for (let k = 1; k <= 4; k++) await env.put(`threads/cut-${k}.json.gz`, cutShort(k));
  await env.put('threads/whole.json.gz', gzipSync(lines(100, 9)));
});
afterAll(async () => {
  await pool.close();
  await env.stop();
});

it.each([
  ['on the main thread', 'alone/', 1],
  ['on the read threads', 'threads/', 4],
])('reads a damaged object once and says so, %s', async (_where, prefix, damaged) => {
  const fingerprints = memoryFingerprints();
  const job = { 'object-names': [prefix], preprocessors: ['extension'], fingerprinting: true };
  const first = await env.run(job, { asJsonLines: true, readPool: pool, fingerprints });
  const delivered = first.events.filter((e) => (e as { object: number }).object !== 9).length;
  expect(delivered).toBeGreaterThan(0);
  const reports = first.reports
    .filter((r) => r.type === 'job-errors' && r.payload.reason === 'damaged-object')
    .map((r) => r.payload);
  expect(reports).toHaveLength(damaged);
  expect(reports.reduce((n, r) => n + Number(r.events_delivered), 0)).toBe(delivered);
  expect(String(reports[0]!.message)).toMatch(/is damaged .*not read again unless it is rewritten/);
  expect(first.ended).toMatchObject({ damaged_objects: damaged, failed_objects: 0 });
  const second = await env.run(job, { asJsonLines: true, readPool: pool, fingerprints });
  expect(second.events).toEqual([]);
  expect(second.ended).toMatchObject({ downloaded: 0 });
});
