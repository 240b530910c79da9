/**
 * Review F4: the counter document of a run read in parts stayed for ever when its run never
 * ended (a dead runner's, or one whose parts were lost). It carries `expires_at` now, a day
 * after its last change: Firestore's TTL policy deletes it in the cloud (terraform/firestore.tf
 * `run_ttl`), the local stack's sweep where no TTL policy runs.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobCollection } from '../../functions/adapters/firestore-paths.ts';
import { sweepExpired } from '../../functions/scheduled/ttl-sweep.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

it('an expired run document is swept; one still in use stays', async () => {
  const db = await t.deps.clients.firestore();
  const runs = jobCollection(db, 'default', 'big', 'runs');
  const now = new Date('2026-06-01T00:00:00Z');
  await runs.doc('lost').set({ pending: 3, parts: 2, expires_at: new Date(now.getTime() - 1_000) });
  await runs.doc('live').set({ pending: 2, parts: 1, expires_at: new Date(now.getTime() + 86_400_000) });
  expect(await sweepExpired(db, 500, now)).toBe(1);
  expect((await runs.get()).docs.map((d) => d.id)).toEqual(['live']);
});
