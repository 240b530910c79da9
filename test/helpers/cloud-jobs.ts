/**
 * Jobs for the `cloud` worker in tests: a `gcs` job must bring a service-account key there
 * (the storage emulator does not check it), and a job is saved and deployed through the API.
 *
 * @example
 *   await deployToCloud(t, admin, 'orders', cloudGcsYaml('orders', 'bucket', 'in/'));
 */
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { jsonInit } from './http.ts';

/** A service-account key in form only. */
export const FORM_ONLY_KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'tenant-project',
  client_email: 'reader@tenant-project.iam.gserviceaccount.com',
  private_key:
    '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n',
});

/** A fingerprinting `gcs` job over `prefix` of `bucket`, printing its events. */
export function cloudGcsYaml(name: string, bucket: string, prefix: string): string {
  return `name: ${name}\ninput:\n  gcs:\n    bucket-name: ${bucket}\n    credentials:\n      storage-url: gs://${bucket}\n      service-account:\n        key: '${FORM_ONLY_KEY}'\n    object-names: ['${prefix}']\n    fingerprinting: true\noutput:\n  print: {}\n`;
}

/**
 * The same job without a trigger, reading the notifications of `subscription`: on the cloud
 * worker, they wake it (`sluice gcs notify --wake`). Its events name their object.
 */
export function wokenGcsYaml(name: string, bucket: string, prefix: string, subscription: string): string {
  return cloudGcsYaml(name, bucket, prefix).replace(
    '    fingerprinting: true\n',
    `    fingerprinting: true\n    object-name-field: object\n    notifications:\n      subscription: ${subscription}\n`,
  );
}

export async function deployToCloud(
  t: TestApp,
  headers: Record<string, string>,
  name: string,
  yaml: string,
): Promise<void> {
  const saved = await t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body: yaml,
  });
  expect(saved.status, await saved.clone().text()).toBe(201);
  const deployed = await t.request(
    `/api/jobs/${name}/deploy`,
    jsonInit('POST', { workers: ['cloud'] }, headers),
  );
  expect(deployed.status).toBe(200);
}

/**
 * Makes `bucket` on the storage emulator at `url` with `count` one-line objects
 * `in/o-N.json` (`{"o":N}`), as the cloud worker's run tests read them.
 */
export async function bucketOfOneLineObjects(url: string, bucket: string, count: number): Promise<void> {
  const { Storage } = await import('@google-cloud/storage');
  const storage = new Storage({ apiEndpoint: url, projectId: 'demo' });
  await storage.createBucket(bucket);
  await Promise.all(
    Array.from({ length: count }, (_, o) =>
      storage.bucket(bucket).file(`in/o-${o}.json`).save(`{"o":${o}}\n`, { resumable: false }),
    ),
  );
}
