/**
 * Helpers for the worker-boundary security tests: jobs deployed through the API, and
 * workers whose tokens are real (created through the API, or straight in the store for
 * records that older versions allowed, such as the id `toString`).
 */
import { authServices } from '../../functions/auth/services.ts';
import { createWorker } from '../../functions/workers/registry.ts';
import type { TestApp } from '../helpers/app.ts';
import { apiKeyToken, bearer } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';

export type Headers = Record<string, string>;

export function jobYaml(name: string): string {
  return `name: ${name}\ninput:\n  http-poll:\n    url: http://example.com\noutput:\n  print: {}\n`;
}

/** Saves the job and deploys it to `workers`; fails the test when either step is refused. */
export async function deployJob(t: TestApp, admin: Headers, name: string, workers: string[], yaml?: string) {
  const put = await t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: yaml ?? jobYaml(name),
  });
  if (put.status >= 300) throw new Error(`put ${name}: ${put.status} ${await put.text()}`);
  const res = await t.request(`/api/jobs/${name}/deploy`, jsonInit('POST', { workers }, admin));
  if (res.status !== 200) throw new Error(`deploy ${name}: ${res.status} ${await res.text()}`);
}

/** A worker created through the API, as an admin does; returns its bearer headers. */
export async function apiWorker(t: TestApp, admin: Headers, id: string): Promise<Headers> {
  const res = await t.request('/api/workers', jsonInit('POST', { id }, admin));
  if (res.status !== 201) throw new Error(`worker ${id}: ${res.status} ${await res.text()}`);
  return bearer(await apiKeyToken(t, (await json(res)).key));
}

/** A worker written straight into the store, as records made before the id rules were. */
export async function storedWorker(t: TestApp, id: string, tenant = 'default'): Promise<Headers> {
  const key = await createWorker(await authServices(t.deps).store(), tenant, id, {});
  return bearer(await apiKeyToken(t, key));
}

/** The job's deployments as stored: worker id → deployment. */
export async function storedDeployments(t: TestApp, job: string, tenant = 'default') {
  const db = await t.deps.clients.firestore();
  const snap = await db.collection('tenants').doc(tenant).collection('jobs').doc(job).get();
  return (snap.get('deployments') ?? {}) as Record<string, { version: number; state: string }>;
}

/** Events of the log with these filters (as the admin reads them). */
export async function events(t: TestApp, admin: Headers, query: string) {
  const res = await t.request(`/api/events?${query}`, { headers: admin });
  if (res.status !== 200) throw new Error(`events: ${res.status} ${await res.text()}`);
  return (await json(res)).events as {
    type: string;
    job?: string;
    worker?: string;
    payload: Record<string, unknown>;
  }[];
}
