/**
 * `ordered`: several objects are read at once, and the output still gets each object's
 * events together, objects in listing order: the same events in the same order on every
 * run. The first object is large (many chunks) and the others small, so they finish while
 * it streams, and requests are slowed at random (seeded): unordered, their events would
 * land in the middle of the first object's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planGcsInput } from '../../functions/runner/inputs/gcs/config.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';
import { type GcsTestEnv, gcsJob, gcsTestEnv } from './helpers.ts';

let env: GcsTestEnv;
const OBJECTS = 6;
const expected: string[] = [];

beforeAll(async () => {
  env = await gcsTestEnv('ordered-bucket');
  for (let o = 0; o < OBJECTS; o++) {
    const lines: string[] = [];
    for (let i = 0; i < (o === 0 ? 40_000 : 50 * o); i++) {
      lines.push(JSON.stringify({ o, i }));
      expected.push(`${o}:${i}`);
    }
    await env.put(`in/${o}.json`, `${lines.join('\n')}\n`);
  }
});
afterAll(() => env.stop());

describe('gcs input, ordered', () => {
  it('delivers each object whole, in listing order, whatever order the reads end in', async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    for (const asJsonLines of [true, false]) {
      for (let round = 0; round < 3; round++) {
        env.emulator.setFaults({ latencyMs: Math.floor(random() * 20), seed: Math.floor(random() * 1000) });
        const { events } = await env.run(
          { 'object-names': ['in/'], ordered: true },
          { concurrency: 4, batchEvents: 100, asJsonLines },
        );
        const got = events.map((e) => `${e.o}:${e.i}`);
        expect(got.length, `seed ${seed}`).toBe(expected.length);
        expect(got, `seed ${seed}, round ${round}, json lines ${asJsonLines}`).toEqual(expected);
      }
    }
    env.emulator.setFaults({});
  });

  it('is off unless the job asks', () => {
    expect(planGcsInput(gcsJob('b-1', { ordered: true })).ordered).toBe(true);
    expect(planGcsInput(gcsJob('b-1', {})).ordered).toBe(false);
  });
});
