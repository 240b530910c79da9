/**
 * The Cloud Storage client for one `gcs` input, from the job's `credentials`: a
 * service-account or application-credentials file (`path`) or the JSON itself
 * (`key`); neither means Application Default Credentials. With `STORAGE_EMULATOR_HOST`
 * set, the SDK talks to that emulator without credentials. The SDK's own retries are
 * off: `retry.ts` owns them, so `retry.retries` means what the job says.
 *
 * @example
 *   const storage = await storageForCredentials(plan.credentials);
 */
import type { Storage, StorageOptions } from '@google-cloud/storage';
import type { GcsInput } from '../../../../shared/job/index.ts';

export async function storageForCredentials(
  credentials: GcsInput['credentials'],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Storage> {
  const { Storage } = await import('@google-cloud/storage');
  return new Storage(storageOptions(credentials, env));
}

export function storageOptions(credentials: GcsInput['credentials'], env: NodeJS.ProcessEnv): StorageOptions {
  const options: StorageOptions = { retryOptions: { autoRetry: false, maxRetries: 0 } };
  if (env.STORAGE_EMULATOR_HOST) {
    const host = env.STORAGE_EMULATOR_HOST;
    return {
      ...options,
      apiEndpoint: /^https?:\/\//.test(host) ? host : `http://${host}`,
      projectId: 'emulator',
    };
  }
  const source = credentials['service-account'] ?? credentials['application-credentials'];
  if (source?.path) return { ...options, keyFilename: source.path };
  if (source?.key) {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(source.key) as Record<string, unknown>;
    } catch {
      throw new Error('credentials key is not valid JSON (expected a service-account key file)');
    }
    const projectId = typeof parsed.project_id === 'string' ? parsed.project_id : undefined;
    return { ...options, credentials: parsed, ...(projectId ? { projectId } : {}) };
  }
  return options;
}
