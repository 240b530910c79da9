/**
 * What tests of notified `gcs` jobs on the `cloud` worker start from: the control plane on
 * the emulators with an admin, the project's storage emulator (STORAGE_EMULATOR_HOST names
 * it, for the runs), and Storage and Pub/Sub clients of `project` to make buckets and
 * their notifications with.
 *
 * @example
 *   let env: NotifiedEnv;
 *   beforeAll(async () => { env = await notifiedEnv('demo-wake'); });
 *   afterAll(() => env.close());
 */
import { PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { type TestApp, testApp } from './app.ts';
import { bearer, bootstrapTestAdmin } from './auth.ts';

export interface NotifiedEnv {
  t: TestApp;
  admin: Record<string, string>;
  gcs: StorageEmulator;
  storage: Storage;
  pubsub: PubSub;
  close(): Promise<void>;
}

export async function notifiedEnv(project: string): Promise<NotifiedEnv> {
  const t = await testApp();
  const admin = bearer(await bootstrapTestAdmin(t));
  const gcs = await startStorageEmulator({ port: 0 });
  process.env.STORAGE_EMULATOR_HOST = gcs.url;
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: project });
  const pubsub = new PubSub({ projectId: project });
  return {
    t,
    admin,
    gcs,
    storage,
    pubsub,
    async close() {
      await pubsub.close();
      await t.close();
      await gcs.stop();
    },
  };
}
