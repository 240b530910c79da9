/**
 * Lazily created Google Cloud clients. Each SDK costs 200-300 ms to import, so an
 * entry point pays only for the SDKs its routes actually touch, and only on first use.
 *
 * @example
 *   const clients = cloudClients({ projectId: 'demo-sluice' });
 *   const db = await clients.firestore();
 */
import type { Firestore } from '@google-cloud/firestore';
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';

export interface CloudClients {
  readonly projectId: string;
  firestore(): Promise<Firestore>;
  pubsub(): Promise<PubSub>;
  storage(): Promise<Storage>;
  close(): Promise<void>;
}

export function cloudClients(options: { projectId: string }): CloudClients {
  const { projectId } = options;
  // Against emulators there is no metadata server; skip google-auth's probe and its warning.
  if (process.env.FIRESTORE_EMULATOR_HOST && !process.env.METADATA_SERVER_DETECTION) {
    process.env.METADATA_SERVER_DETECTION = 'none';
  }
  let firestore: Promise<Firestore> | undefined;
  let pubsub: Promise<PubSub> | undefined;
  let storage: Promise<Storage> | undefined;
  return {
    projectId,
    firestore() {
      firestore ??= import('@google-cloud/firestore').then(
        ({ Firestore }) => new Firestore({ projectId, ignoreUndefinedProperties: true }),
      );
      return firestore;
    },
    pubsub() {
      pubsub ??= import('@google-cloud/pubsub').then(({ PubSub }) => new PubSub({ projectId }));
      return pubsub;
    },
    storage() {
      storage ??= import('@google-cloud/storage').then(({ Storage }) => new Storage({ projectId }));
      return storage;
    },
    async close() {
      await Promise.all([firestore?.then((db) => db.terminate()), pubsub?.then((ps) => ps.close())]);
    },
  };
}
