/**
 * The Firestore emulator runs no TTL policy, so without a sweep the local stack kept every
 * fingerprint, event, login failure and stream ticket for ever. `sweepExpired` deletes
 * expired documents of every expiring collection (the one list terraform's TTL policies are
 * checked against), a bounded batch at a time, and nothing that has not expired.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPIRING_COLLECTIONS, sweepExpired } from '../../functions/scheduled/ttl-sweep.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

/** Where documents of each expiring collection live, as the code that writes them puts them. */
const PLACES: Record<(typeof EXPIRING_COLLECTIONS)[number]['collection'], string> = {
  fingerprints: 'tenants/acme/jobs/copy/fingerprints',
  'rate-limit-failures': 'rate-limits/abc/rate-limit-failures',
  events: 'tenants/acme/events',
  'stream-tickets': 'stream-tickets',
  runs: 'tenants/acme/jobs/copy/runs',
  'parked-runs': 'tenants/acme/parked-runs',
};

describe('sweepExpired', () => {
  it('deletes expired documents of every expiring collection, a bounded batch per run, and keeps the rest', async () => {
    const db = await t.deps.clients.firestore();
    const now = new Date('2026-06-01T00:00:00Z');
    const past = new Date(now.getTime() - 1_000);
    const future = new Date(now.getTime() + 86_400_000);
    for (const { collection, field } of EXPIRING_COLLECTIONS) {
      const place = db.collection(PLACES[collection]);
      for (let i = 0; i < 3; i++) await place.doc(`old-${i}`).set({ [field]: past });
      await place.doc('fresh').set({ [field]: future });
    }
    const expired = EXPIRING_COLLECTIONS.length * 3;

    // Bounded: one run deletes no more than its limit.
    expect(await sweepExpired(db, 5, now)).toBe(5);
    expect(await sweepExpired(db, 1_000, now)).toBe(expired - 5);
    expect(await sweepExpired(db, 1_000, now)).toBe(0);

    for (const { collection } of EXPIRING_COLLECTIONS) {
      const left = await db.collection(PLACES[collection]).get();
      expect(
        left.docs.map((d) => d.id),
        collection,
      ).toEqual(['fresh']);
    }
  });
});
