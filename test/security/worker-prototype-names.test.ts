// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} is literal job text here
/**
 * Issue 16, item 16 (worker part): names every JavaScript object answers to. Firestore's
 * `data()` gives plain objects, so `record.deployments['toString']` is a function, hence
 * "deployed". A worker enrolled as `toString` resolved the secret of a job deployed only
 * elsewhere, read and committed its fingerprints and heartbeat it. Every worker-API lookup
 * by an outside name is walked here with such names: as the worker id (records written
 * before `WorkerId` refused them), as job names in worker calls, and as fingerprint keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { json, jsonInit } from '../helpers/http.ts';
import {
  apiWorker,
  deployJob,
  events,
  type Headers,
  storedDeployments,
  storedWorker,
} from './worker-helpers.ts';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
/** `__proto__` cannot be a Firestore document id at all (`__...__` ids are reserved). */
const STORABLE = NAMES.filter((n) => n !== '__proto__');
const SECRET = 'vault-secret-5d1f0e';

let t: TestApp;
let admin: Headers;
let honest: Headers;
const legacy = new Map<string, Headers>();

beforeAll(async () => {
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  honest = await apiWorker(t, admin, 'honest');
  expect((await t.request('/api/secrets/vault/key', jsonInit('PUT', { value: SECRET }, admin))).status).toBe(
    204,
  );
  const yaml =
    "name: vault\ninput:\n  http-poll:\n    url: 'http://example.com/?k=${secret|vault/key}'\noutput:\n  print: {}\n";
  await deployJob(t, admin, 'vault', ['honest'], yaml);
  for (const id of STORABLE) legacy.set(id, await storedWorker(t, id));
}, 60_000);
afterAll(() => t.close());

function refused(status: number) {
  expect([400, 403, 404]).toContain(status);
}

describe('worker ids that are Object.prototype properties', () => {
  it('are refused when an admin creates or a secret enrolls them', async () => {
    const res = await t.request(
      '/api/enrollment-secrets',
      jsonInit('POST', { name: 'proto', max_uses: 10 }, admin),
    );
    const { secret } = await json(res);
    for (const id of NAMES) {
      expect((await t.request('/api/workers', jsonInit('POST', { id }, admin))).status).toBe(400);
      expect((await t.request('/api/workers/enroll', jsonInit('POST', { secret, id }))).status).toBe(400);
    }
  });

  for (const id of STORABLE) {
    it(`a stored worker ${id} cannot resolve, fingerprint or heartbeat a job deployed elsewhere`, async () => {
      const worker = legacy.get(id)!;
      const resolve = await t.request(
        '/api/worker/secrets/resolve',
        jsonInit('POST', { job: 'vault', refs: ['vault/key'] }, worker),
      );
      expect(resolve.status).toBe(403);
      expect(await resolve.text()).not.toContain(SECRET);

      for (const path of ['/api/worker/fingerprints/check', '/api/worker/fingerprints/commit']) {
        const res = await t.request(path, jsonInit('POST', { job: 'vault', keys: ['gs://b/o#1'] }, worker));
        expect(res.status).toBe(403);
      }

      const beat = await t.request(
        '/api/worker/heartbeat',
        jsonInit('POST', { jobs: [{ name: 'vault', state: 'failed', error: 'forged' }] }, worker),
      );
      expect(beat.status).toBe(204);
      expect(Object.keys(await storedDeployments(t, 'vault'))).toEqual(['honest']);
      expect(await events(t, admin, `type=job-state-transition&worker=${id}`)).toEqual([]);

      const telemetry = await t.request(
        '/api/worker/events',
        jsonInit('POST', { events: [{ type: 'job-errors', job: 'vault', payload: {} }] }, worker),
      );
      expect(telemetry.status).toBe(403);
      expect(await json(await t.request('/api/worker/jobs', { headers: worker }))).toEqual([]);
    });
  }
});

describe('job names that are Object.prototype properties, in worker calls', () => {
  it('never answer as if the job were deployed, and never fail with a server error', async () => {
    for (const job of NAMES) {
      refused(
        (
          await t.request(
            '/api/worker/secrets/resolve',
            jsonInit('POST', { job, refs: ['vault/key'] }, honest),
          )
        ).status,
      );
      for (const path of ['/api/worker/fingerprints/check', '/api/worker/fingerprints/commit'])
        refused((await t.request(path, jsonInit('POST', { job, keys: ['k'] }, honest))).status);
      const beat = await t.request(
        '/api/worker/heartbeat',
        jsonInit('POST', { jobs: [{ name: job, state: 'running' }] }, honest),
      );
      expect([204, 400]).toContain(beat.status);
      refused(
        (
          await t.request(
            '/api/worker/events',
            jsonInit('POST', { events: [{ type: 'job-metrics', job, payload: {} }] }, honest),
          )
        ).status,
      );
    }
    expect(Object.keys(await storedDeployments(t, 'vault'))).toEqual(['honest']);
  });
});

describe('fingerprint keys that are Object.prototype properties', () => {
  it('are seen only after they were committed', async () => {
    const check = async () =>
      (
        await json(
          await t.request(
            '/api/worker/fingerprints/check',
            jsonInit('POST', { job: 'vault', keys: NAMES }, honest),
          ),
        )
      ).seen;
    expect(await check()).toEqual([]);
    const commit = await t.request(
      '/api/worker/fingerprints/commit',
      jsonInit('POST', { job: 'vault', keys: NAMES.slice(0, 2), max_age: '1h' }, honest),
    );
    expect(commit.status).toBe(204);
    expect(await check()).toEqual(NAMES.slice(0, 2));
  });
});
