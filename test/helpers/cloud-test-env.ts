/**
 * The set-up the cloud worker's run tests share: a test app on the emulators, and a storage
 * emulator of its own that the runners of the test's process read (STORAGE_EMULATOR_HOST).
 *
 * @example
 *   let t: TestApp;
 *   let gcs: StorageEmulator;
 *   withCloudTestEnv((env) => ({ t, gcs } = env));
 */
import { afterAll, beforeAll } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { type TestApp, testApp } from './app.ts';

export function withCloudTestEnv(set: (env: { t: TestApp; gcs: StorageEmulator }) => void): void {
  let env: { t: TestApp; gcs: StorageEmulator } | undefined;
  beforeAll(async () => {
    const t = await testApp();
    const gcs = await startStorageEmulator({ port: 0 });
    process.env.STORAGE_EMULATOR_HOST = gcs.url;
    env = { t, gcs };
    set(env);
  });
  afterAll(async () => {
    await env?.t.close();
    await env?.gcs.stop();
  });
}
