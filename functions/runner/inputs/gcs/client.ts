/**
 * The Cloud Storage client for one `gcs` input, from the job's `credentials`: a
 * service-account or application-credentials file (`path`, for `sluice job run` on one's
 * own machine) or the key itself (`key`); neither means Application Default Credentials.
 * A `key` must be a service-account key (`shared/job/inputs/gcs-credentials.ts`), checked
 * here again because a key from `${secret|...}` is seen only now; the client gets its
 * `client_email` and `private_key` and nothing else of it. With `STORAGE_EMULATOR_HOST`
 * set, the SDK talks to that emulator without credentials. The SDK's own retries are
 * off: `retry.ts` owns them, so `retry.retries` means what the job says.
 *
 * @example
 *   const storage = await storageForCredentials(plan.credentials);
 */
import type { Storage, StorageOptions } from '@google-cloud/storage';
import type { GcsInput } from '../../../../shared/job/index.ts';
import { parseServiceAccountKey } from '../../../../shared/job/inputs/gcs-credentials.ts';

export async function storageForCredentials(
  credentials: GcsInput['credentials'],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Storage> {
  const { Storage } = await import('@google-cloud/storage');
  return new Storage(storageOptions(credentials, env));
}

export function storageOptions(credentials: GcsInput['credentials'], env: NodeJS.ProcessEnv): StorageOptions {
  const options: StorageOptions = { retryOptions: { autoRetry: false, maxRetries: 0 } };
  const source = credentials['service-account'] ?? credentials['application-credentials'];
  // Checked before the emulator short cut, so that a job behaves the same locally and in the cloud.
  const key = source?.key !== undefined ? checkedKey(source.key) : undefined;
  if (env.STORAGE_EMULATOR_HOST) {
    const host = env.STORAGE_EMULATOR_HOST;
    return {
      ...options,
      apiEndpoint: /^https?:\/\//.test(host) ? host : `http://${host}`,
      projectId: 'emulator',
    };
  }
  if (source?.path) return { ...options, keyFilename: source.path };
  if (key) {
    return {
      ...options,
      credentials: { client_email: key.client_email, private_key: key.private_key },
      ...(key.project_id ? { projectId: key.project_id } : {}),
    };
  }
  return options;
}

function checkedKey(text: string) {
  const parsed = parseServiceAccountKey(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.key;
}
