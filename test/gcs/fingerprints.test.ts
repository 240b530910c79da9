/**
 * Fingerprinting: the Firestore store (real emulator) and the input's use of it:
 * a second run downloads nothing, an overwritten object is read again, an expired
 * fingerprint is read again, nothing is fingerprinted before its events were delivered,
 * and a run aborted at any point followed by a full run delivers every line.
 */
import { randomUUID } from 'node:crypto';
import { Firestore } from '@google-cloud/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  firestoreFingerprints,
  firestoreWatermarks,
  READ_CHUNK,
} from '../../functions/runner/fingerprints/firestore.ts';
import type { RunEvent } from '../../functions/runner/types.ts';
import { type GcsTestEnv, gcsTestEnv } from './helpers.ts';

let env: GcsTestEnv;
let db: Firestore;
let n = 0;

beforeAll(async () => {
  env = await gcsTestEnv();
  db = new Firestore({ projectId: `demo-test-${randomUUID().slice(0, 8)}` });
});
afterAll(async () => {
  await env.stop();
  await db.terminate();
});
beforeEach(async () => {
  env.bucket = `fp-bucket-${++n}`;
  await env.storage.createBucket(env.bucket);
});

describe('Firestore stores', () => {
  it('seen returns committed, unexpired keys per job, in a few concurrent read RPCs', async () => {
    let clock = Date.now();
    let reads = 0;
    const store = firestoreFingerprints(db, { tenant: 't1', now: () => clock, onRead: () => reads++ });
    await store.commit('job-a', ['k1', 'k2'], 60_000);
    const keys = Array.from({ length: 1000 }, (_, i) => `x${i}`).concat(['k1', 'k2']);
    expect(await store.seen('job-a', keys)).toEqual(new Set(['k1', 'k2']));
    expect(reads).toBe(Math.ceil(keys.length / READ_CHUNK));
    expect(await store.seen('job-b', ['k1'])).toEqual(new Set());
    clock += 61_000;
    expect(await store.seen('job-a', ['k1'])).toEqual(new Set());
  });

  it('seen answers the same set whether the keys go in one read RPC or in chunks', async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `gs://b/o-${i}#1`);
    const committed = keys.filter((_, i) => i % 7 === 0 || i === 249 || i === 250 || i === 999);
    const chunked = firestoreFingerprints(db, { tenant: 't-chunks' });
    await chunked.commit('job-a', committed, 60_000);
    let reads = 0;
    const single = firestoreFingerprints(db, { tenant: 't-chunks', readChunk: 1000, onRead: () => reads++ });
    // Shuffled, with duplicates: each answer must still be matched to its own key.
    const asked = [...keys].reverse().concat(keys.slice(0, 10));
    expect(await chunked.seen('job-a', asked)).toEqual(new Set(committed));
    expect(await single.seen('job-a', asked)).toEqual(new Set(committed));
    expect(reads).toBe(1);
  });

  it('prepare connects with one read and leaves no trace', async () => {
    let reads = 0;
    const store = firestoreFingerprints(db, { tenant: 't-prepare', onRead: () => reads++ });
    await store.prepare!('job-a');
    expect(reads).toBe(1);
    const { docs } = await db.collection('tenants/t-prepare/jobs/job-a/fingerprints').get();
    expect(docs).toHaveLength(0);
  });

  it('watermarks round-trip', async () => {
    const marks = firestoreWatermarks(db, { tenant: 't1' });
    expect(await marks.get('job-a', 'window-end')).toBeUndefined();
    await marks.set('job-a', 'window-end', '2026-03-01T00:00:00.000Z');
    expect(await marks.get('job-a', 'window-end')).toBe('2026-03-01T00:00:00.000Z');
  });
});

describe('fingerprinting in the input', () => {
  it('a second run downloads nothing; an overwritten object is read again; an expired one too', async () => {
    let clock = Date.now();
    const fingerprints = firestoreFingerprints(db, { tenant: `t-${n}`, now: () => clock });
    await env.put('a.json', '{"n":1}\n');
    await env.put('b.json', '{"n":2}\n');
    const fields = { fingerprinting: true, 'maximum-fingerprint-age': '1h' };
    expect((await env.run(fields, { fingerprints })).events).toHaveLength(2);
    env.emulator.resetStats();
    const second = await env.run(fields, { fingerprints });
    expect(second.events).toHaveLength(0);
    expect(second.ended.skipped).toEqual({ fingerprinted: 2 });
    expect(env.emulator.stats().download).toBe(0);

    await env.put('a.json', '{"n":3}\n');
    expect((await env.run(fields, { fingerprints })).events).toEqual([{ n: 3 }]);

    clock += 2 * 3_600_000;
    expect((await env.run(fields, { fingerprints })).events).toHaveLength(2);
  });

  it('fingerprints are per job', async () => {
    const fingerprints = firestoreFingerprints(db, { tenant: `t-${n}` });
    await env.put('a.json', '{"n":1}\n');
    await env.run({ fingerprinting: true }, { fingerprints, job: 'one' });
    expect((await env.run({ fingerprinting: true }, { fingerprints, job: 'two' })).events).toHaveLength(1);
  });

  it('nothing is fingerprinted before all of its events were delivered', async () => {
    const fingerprints = firestoreFingerprints(db, { tenant: `t-${n}` });
    const lines = Array.from({ length: 50 }, (_, i) => `{"i":${i}}`).join('\n');
    await env.put('a.json', lines);
    let delivered = 0;
    await expect(
      env.run(
        { fingerprinting: true },
        {
          fingerprints,
          batchEvents: 10,
          deliver: async (events) => {
            delivered += events.length;
            if (delivered >= 30) throw new Error('output down');
          },
        },
      ),
    ).rejects.toThrow(/output down/);
    expect((await env.run({ fingerprinting: true }, { fingerprints })).events).toHaveLength(50);
  });

  it('aborted at random points then run to the end: every line delivered at least once', async () => {
    const fingerprints = firestoreFingerprints(db, { tenant: `t-${n}` });
    const expected = new Set<string>();
    for (let o = 0; o < 12; o++) {
      const lines = Array.from({ length: 40 }, (_, i) => `{"o":${o},"i":${i}}`);
      for (const l of lines) expected.add(l);
      await env.put(`obj-${o}.json`, lines.join('\n'));
    }
    const seen = new Set<string>();
    const collect = async (events: RunEvent[]) => {
      for (const e of events) seen.add(JSON.stringify(e));
    };
    for (const stopAfter of [1, 3, 7, 15]) {
      const controller = new AbortController();
      let batches = 0;
      await env.run(
        { fingerprinting: true },
        {
          fingerprints,
          batchEvents: 25,
          concurrency: 2,
          signal: controller.signal,
          deliver: async (events) => {
            await collect(events);
            if (++batches === stopAfter) controller.abort(new Error('killed'));
          },
        },
      );
    }
    await env.run({ fingerprinting: true }, { fingerprints, deliver: collect });
    expect(seen).toEqual(expected);
    const last = await env.run({ fingerprinting: true }, { fingerprints });
    expect(last.events).toHaveLength(0);
  });

  it('20% of requests answering 503: the run finishes and nothing is lost', async () => {
    const fingerprints = firestoreFingerprints(db, { tenant: `t-${n}` });
    const expected: string[] = [];
    for (let o = 0; o < 30; o++) {
      const lines = Array.from({ length: 20 }, (_, i) => `{"o":${o},"i":${i}}`);
      expected.push(...lines);
      await env.put(`obj-${o}.json`, lines.join('\n'));
    }
    env.emulator.setFaults({ errorRate: 0.2, errorStatus: 503, seed: 3 });
    try {
      const { events, ended } = await env.run(
        { fingerprinting: true, retry: { timeout: '5s', retries: 10 } },
        { fingerprints },
      );
      expect(events.map((e) => JSON.stringify(e)).sort()).toEqual(expected.sort());
      expect(ended.failed_objects).toBe(0);
      expect(env.emulator.stats().injectedErrors).toBeGreaterThan(0);
    } finally {
      env.emulator.setFaults({});
    }
  });

  it('objects deleted between list and download: each is reported, the rest read, and it is read again if it returns', async () => {
    const fingerprints = firestoreFingerprints(db, { tenant: `t-${n}` });
    for (let o = 0; o < 30; o++) await env.put(`obj-${o}.json`, `{"o":${o}}`);
    env.emulator.setFaults({ deleteAfterListRate: 0.3, seed: 5 });
    let first: Awaited<ReturnType<GcsTestEnv['run']>>;
    try {
      first = await env.run({ fingerprinting: true }, { fingerprints });
    } finally {
      env.emulator.setFaults({});
    }
    const deleted = env.emulator.stats().deletedAfterList;
    expect(deleted).toBeGreaterThan(0);
    expect(first.events).toHaveLength(30 - deleted);
    const gone = first.reports.filter((r) => r.type === 'job-errors').map((r) => r.payload.object as string);
    expect(gone).toHaveLength(deleted);
    expect(first.ended).toMatchObject({ failed_objects: deleted, fingerprinted: 30 - deleted });
    // Put back under the same names (a new generation): only they are read on the next run.
    for (const name of gone) await env.put(name, '{"back":true}');
    const second = await env.run({ fingerprinting: true }, { fingerprints });
    expect(second.events).toEqual(gone.map(() => ({ back: true })));
  });
});
