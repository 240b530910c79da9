/**
 * Firestore-backed fingerprint and high-watermark stores for the cloud worker.
 *
 * Fingerprints live at `tenants/{tenant}/jobs/{job}/fingerprints/{sha256(key)}` with
 * `expires_at` (a Firestore TTL policy on that field deletes expired ones; until it
 * runs, `seen` ignores them). `seen` reads the keys of a call in a few concurrent
 * `getAll`s of READ_CHUNK keys (BatchGetDocuments RPCs), so a page of 1000 listed
 * objects costs 4 read RPCs, answered in parallel. `prepare` (one read) connects
 * while the input lists its first page.
 * `commit` writes in batches of 500 (Firestore's limit per batch).
 * Watermarks live at `tenants/{tenant}/jobs/{job}/watermarks/{name}`.
 *
 * @example
 *   const fingerprints = firestoreFingerprints(db, { tenant: 'acme' });
 *   const seen = await fingerprints.seen('job-a', ['gs://b/a.json#1']);
 */
import * as crypto from 'node:crypto';
import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { jobCollection } from '../../adapters/firestore-paths.ts';
import type { FingerprintStore, WatermarkStore } from '../types.ts';

const { createHash } = crypto;
/** Absent before Node 20.12 (package.json allows any Node 20). */
const hash = (crypto as Partial<typeof crypto>).hash;

export interface StoreScope {
  tenant: string;
  now?: () => number;
  /** Called once per read RPC (the benchmark counts them). */
  onRead?: () => void;
  /** Keys per read RPC of `seen` (default READ_CHUNK). */
  readChunk?: number;
}

const WRITE_BATCH = 500;
/** Keys per BatchGetDocuments RPC of `seen`. */
export const READ_CHUNK = 250;
/** Not a sha256 hex digest, so never a fingerprint's id. */
const PREPARE_DOC_ID = 'prepare';
/** However many keys a `seen` call gets, it sends at most this many RPCs at once. */
const MAX_READS_PER_CALL = 8;

export function fingerprintDocId(key: string): string {
  // The one-shot `hash` (Node >= 20.12) is ~3x faster than a Hash object, which shows
  // when a re-scan derives 10,000 ids; same digest either way.
  return hash ? hash('sha256', key, 'hex') : createHash('sha256').update(key).digest('hex');
}

export function firestoreFingerprints(db: Firestore, scope: StoreScope): FingerprintStore {
  const now = scope.now ?? Date.now;
  const collection = (job: string) => jobCollection(db, scope.tenant, job, 'fingerprints');
  return {
    async seen(job, keys) {
      const seen = new Set<string>();
      if (!keys.length) return seen;
      const fingerprints = collection(job);
      const unique = [...new Set(keys)];
      const refs = unique.map((key) => fingerprints.doc(fingerprintDocId(key)));
      // A few concurrent RPCs instead of one, which the server answers in parallel; a
      // page of 1000 keys still costs only 4 RPCs (0.4 per 100 objects).
      const chunk = Math.max(scope.readChunk ?? READ_CHUNK, Math.ceil(refs.length / MAX_READS_PER_CALL));
      const reads: Promise<DocumentSnapshot[]>[] = [];
      for (let i = 0; i < refs.length; i += chunk) {
        scope.onRead?.();
        // Only the expiry is needed: the rest of the document is not sent.
        reads.push(db.getAll(...refs.slice(i, i + chunk), { fieldMask: ['expires_at'] }));
      }
      const snapshots = (await Promise.all(reads)).flat();
      const at = now();
      snapshots.forEach((snapshot, i) => {
        const expires = snapshot.get('expires_at') as { toMillis(): number } | undefined;
        if (snapshot.exists && expires && expires.toMillis() > at) seen.add(unique[i]!);
      });
      return seen;
    },
    async prepare(job) {
      // The client loads its protos and connects on its first RPC (~0.3-0.9 s cold); one
      // read of a document that never exists does that while the first page is listed.
      scope.onRead?.();
      await db.getAll(collection(job).doc(PREPARE_DOC_ID), { fieldMask: [] });
    },
    async commit(job, keys, maxAgeMs) {
      if (!keys.length) return;
      const { Timestamp } = await import('@google-cloud/firestore');
      const fingerprints = collection(job);
      const at = now();
      const expiresAt = Timestamp.fromMillis(at + maxAgeMs);
      const committedAt = Timestamp.fromMillis(at);
      for (let i = 0; i < keys.length; i += WRITE_BATCH) {
        const batch = db.batch();
        for (const key of keys.slice(i, i + WRITE_BATCH)) {
          batch.set(fingerprints.doc(fingerprintDocId(key)), {
            key,
            expires_at: expiresAt,
            committed_at: committedAt,
          });
        }
        await batch.commit();
      }
    },
  };
}

export function firestoreWatermarks(db: Firestore, scope: Pick<StoreScope, 'tenant'>): WatermarkStore {
  const doc = (job: string, name: string) =>
    jobCollection(db, scope.tenant, job, 'watermarks').doc(encodeURIComponent(name));
  return {
    async get(job, name) {
      const snapshot = await doc(job, name).get();
      return snapshot.exists ? (snapshot.get('value') as string) : undefined;
    },
    async set(job, name, value) {
      await doc(job, name).set({ value, updated_at: new Date().toISOString() });
    },
  };
}
