/**
 * The gcs input's side of shards (functions/runs/shards.ts): which objects a run reads
 * itself, which it hands over, and that a part reads exactly its objects.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ShardControl } from '../../functions/runner/types.ts';
import { type GcsTestEnv, gcsTestEnv, memoryFingerprints } from './helpers.ts';

let env: GcsTestEnv;

beforeAll(async () => {
  env = await gcsTestEnv('parts');
  for (let o = 0; o < 25; o++)
    await env.put(`in/o-${String(o).padStart(2, '0')}.json`, `${JSON.stringify({ o })}\n`);
});
afterAll(async () => {
  await env.stop();
});

function shards(threshold: number) {
  const parts: Record<string, unknown>[][] = [];
  const control: ShardControl = { threshold, request: async (part) => void parts.push(part) };
  return { control, parts };
}

it('reads the first `threshold` objects and hands the rest over, as many at a time', async () => {
  const { control, parts } = shards(10);
  const fingerprints = memoryFingerprints();
  const run = await env.run(
    { 'object-names': ['in/'], fingerprinting: true },
    { shards: control, fingerprints },
  );
  expect(run.events).toHaveLength(10);
  expect(parts.map((p) => p.length)).toEqual([10, 5]);
  expect(run.ended).toMatchObject({ listed: 25, downloaded: 10, shards: 2, sharded_objects: 15 });
  // A part reads its objects, and counts them as downloaded, not as listed again.
  const part = await env.run(
    { 'object-names': ['in/'], fingerprinting: true },
    { shards: { ...control, part: parts[0]! }, fingerprints },
  );
  expect(part.events.map((e) => (e as { o: number }).o).sort((a, b) => a - b)).toEqual([
    10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
  ]);
  expect(part.ended).toMatchObject({ listed: 0, downloaded: 10 });
});

it('does not split a window, whose watermark moves on when its run ends', async () => {
  const { control, parts } = shards(10);
  const run = await env.run(
    { 'object-names': ['in/'] },
    { shards: control, window: { start: new Date(0), end: new Date(Date.now() + 60_000) } },
  );
  expect(run.events).toHaveLength(25);
  expect(parts).toEqual([]);
});

it('cuts a part by its size as well, so that long object names never make one too large to send', async () => {
  const parts: Record<string, unknown>[][] = [];
  // Room for about five of these objects' descriptions in each part.
  const control: ShardControl = {
    threshold: 10,
    maxPartBytes: 2048 + 5 * 420,
    request: async (part) => void parts.push(part),
  };
  const run = await env.run({ 'object-names': ['in/'], fingerprinting: true }, { shards: control });
  expect(run.events).toHaveLength(10);
  expect(parts.flat()).toHaveLength(15);
  expect(parts.length).toBeGreaterThan(1);
  for (const part of parts) expect(JSON.stringify(part).length).toBeLessThanOrEqual(5 * 420);
});
