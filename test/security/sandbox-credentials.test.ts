/**
 * Issue 16, items 8, 9 and 10: what a `gcs` job's credentials can make the runner do.
 *  8. A key that is not a service-account key (`external_account`) makes Google's auth
 *     library read a file of the attacker's choice and post it to the attacker's token_url.
 *  9. A credentials `path` in a job stored in the control plane reads a file of the host.
 * 10. A gcs job without credentials on the `cloud` worker would run as the runner's own
 *     service account (every bucket of the project, other tenants' included).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageForCredentials, storageOptions } from '../../functions/runner/inputs/gcs/client.ts';
import { loadTerraform } from '../../scripts/check-deploy.ts';
import { parseJobYaml } from '../../shared/job/parse.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { cloudTick } from '../helpers/cloud-tick.ts';
import { json, jsonInit } from '../helpers/http.ts';

let capture: Server;
let tokenUrl: string;
const captured: string[] = [];
let secretFile: string;
let t: TestApp;
let admin: Record<string, string>;

const PEM =
  '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n';
const GOOD_KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'tenant-project',
  client_email: 'reader@tenant-project.iam.gserviceaccount.com',
  private_key: PEM,
});

/** An external_account key that makes the auth library read `file` and post it to `tokenUrl`. */
function externalAccountKey(file: string): string {
  return JSON.stringify({
    type: 'external_account',
    audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    token_url: tokenUrl,
    credential_source: { file },
  });
}

beforeAll(async () => {
  capture = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      captured.push(`${req.method} ${req.url} ${body}`);
      res.statusCode = 400;
      res.end('{"error":"invalid_request"}');
    });
  });
  await new Promise<void>((r) => capture.listen(0, '127.0.0.1', r));
  tokenUrl = `http://127.0.0.1:${(capture.address() as AddressInfo).port}/token`;
  secretFile = join(mkdtempSync(join(tmpdir(), 'sluice-creds-')), 'environ');
  writeFileSync(secretFile, 'SLUICE_SIGNING_KEY=the-signing-key');
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
});
afterAll(async () => {
  capture.close();
  await t.close();
});

function gcsJob(name: string, credentials: string): string {
  return `name: ${name}\ninput:\n  gcs:\n    bucket-name: tenant-bucket\n    object-names: []\n    credentials:\n      storage-url: gs://tenant-bucket\n${credentials}output:\n  print: {}\n`;
}

async function put(name: string, yaml: string) {
  return await t.request(`/api/jobs/${name}`, {
    method: 'PUT',
    headers: { ...admin, 'content-type': 'application/yaml' },
    body: yaml,
  });
}

async function jobErrors(job: string): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    const events = await json(await t.request(`/api/events?type=job-errors&job=${job}`, { headers: admin }));
    const reasons = events.events.map((e: { payload: { reason: string } }) => e.payload.reason);
    if (reasons.length) return reasons;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

describe('item 8: only service-account keys', () => {
  it('an external_account key does not make the Storage client read a file and post it to the key’s token_url', async () => {
    const credentials = {
      'storage-url': 'gs://tenant-bucket',
      'service-account': { key: externalAccountKey(secretFile) },
    };
    await expect(
      (async () => {
        const storage = await storageForCredentials(credentials, {});
        await storage.bucket('tenant-bucket').getFiles({ maxResults: 1 });
      })(),
    ).rejects.toThrow(/must be a service-account key \("type": "service_account"\), not "external_account"/);
    expect(captured.join('\n')).not.toContain('the-signing-key');
    expect(captured).toEqual([]);
  });

  it('the client gets client_email and private_key only (a key’s own token_uri is not used)', () => {
    const key = JSON.stringify({ ...JSON.parse(GOOD_KEY), token_uri: 'http://169.254.169.254/token' });
    const options = storageOptions({ 'storage-url': 'gs://b', 'service-account': { key } }, {});
    expect(options.credentials).toEqual({
      client_email: 'reader@tenant-project.iam.gserviceaccount.com',
      private_key: PEM,
    });
    expect(options.projectId).toBe('tenant-project');
  });

  it('saving a job with a literal key that is not a service-account key answers 400 and stores nothing', async () => {
    for (const [name, key] of [
      ['ext-account', externalAccountKey('/proc/self/environ')],
      [
        'user-creds',
        JSON.stringify({ type: 'authorized_user', client_id: 'a', client_secret: 'b', refresh_token: 'c' }),
      ],
    ] as const) {
      const res = await put(name, gcsJob(name, `      service-account:\n        key: '${key}'\n`));
      expect(res.status).toBe(400);
      const body = await json(res);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.details).toContainEqual({
        path: 'input.gcs.credentials.service-account.key',
        message: expect.stringContaining('must be a service-account key'),
        line: expect.any(Number),
        column: expect.any(Number),
      });
      expect((await t.request(`/api/jobs/${name}`, { headers: admin })).status).toBe(404);
    }
    expect(
      (await put('good-key', gcsJob('good-key', `      service-account:\n        key: '${GOOD_KEY}'\n`)))
        .status,
    ).toBe(201);
  });

  it('a key from a secret is checked when the cloud worker resolves it: a job-errors event, and nothing is posted', async () => {
    await t.request(
      '/api/secrets/gcp/key',
      jsonInit('PUT', { value: externalAccountKey(secretFile) }, admin),
    );
    const yaml = gcsJob('secret-key', "      service-account:\n        key: '${secret|gcp/key}'\n");
    expect((await put('secret-key', yaml)).status).toBe(201);
    expect(
      (await t.request('/api/jobs/secret-key/deploy', jsonInit('POST', { workers: ['cloud'] }, admin)))
        .status,
    ).toBe(200);
    await cloudTick(t.deps);
    expect(await jobErrors('secret-key')).toContainEqual(
      expect.stringContaining(
        'must be a service-account key ("type": "service_account"), not "external_account"',
      ),
    );
    expect(captured).toEqual([]);
  });
});

describe('item 9: no credential files in jobs stored in the control plane', () => {
  it('saving a job whose credentials name a file answers 400 and stores nothing', async () => {
    for (const kind of ['service-account', 'application-credentials']) {
      const name = `path-${kind}`;
      const res = await put(name, gcsJob(name, `      ${kind}:\n        path: /proc/self/environ\n`));
      expect(res.status).toBe(400);
      const body = await json(res);
      expect(body.error.details[0]).toMatchObject({
        path: `input.gcs.credentials.${kind}.path`,
        message: expect.stringContaining('may not name a file'),
      });
      expect((await t.request(`/api/jobs/${name}`, { headers: admin })).status).toBe(404);
      const asJson = await t.request(
        `/api/jobs/${name}`,
        jsonInit(
          'PUT',
          {
            name,
            input: {
              gcs: {
                'bucket-name': 'tenant-bucket',
                'object-names': [],
                credentials: { 'storage-url': 'gs://tenant-bucket', [kind]: { path: '/etc/x' } },
              },
            },
            output: { print: {} },
          },
          admin,
        ),
      );
      expect(asJson.status).toBe(400);
    }
  });

  it('`sluice job run FILE` on one’s own machine may still use a path', () => {
    const result = parseJobYaml(gcsJob('local', '      service-account:\n        path: /home/me/sa.json\n'));
    expect(result.ok).toBe(true);
  });
});

describe('item 10: no fallback to the runner’s own identity on the cloud worker', () => {
  it('deploying a gcs job without credentials to cloud answers 400 and changes nothing', async () => {
    expect((await put('ambient', gcsJob('ambient', ''))).status).toBe(201);
    const res = await t.request('/api/jobs/ambient/deploy', jsonInit('POST', { workers: ['cloud'] }, admin));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.message).toContain('cannot run on the cloud worker');
    expect(body.error.details).toContainEqual({
      path: 'input.gcs.credentials',
      message: expect.stringContaining('needs its own credentials'),
    });
    const job = await json(await t.request('/api/jobs/ambient', { headers: admin }));
    expect(job.deployments).toEqual([]);
    expect(job.staged_version).toBeNull();
  });

  it('a job deployed before this rule is not run by the cloud worker: a job-errors event says why', async () => {
    expect((await put('legacy', gcsJob('legacy', ''))).status).toBe(201);
    // As stored by an earlier version: deployed to cloud without credentials.
    const db = await t.deps.clients.firestore();
    const ref = db.doc('tenants/default/jobs/legacy');
    const record = (await ref.get()).data()!;
    const now = new Date().toISOString();
    await ref.update({
      staged: {
        version: record.version,
        definition_json: record.definition_json,
        job_context_json: '{}',
        staged_at: now,
      },
      deployments: { cloud: { state: 'pending', version: record.version, updated_at: now } },
    });
    const results = await cloudTick(t.deps);
    expect(results.map((r) => r.job)).not.toContain('legacy');
    expect(await jobErrors('legacy')).toContainEqual(
      expect.stringMatching(/^not run: .*a gcs job on the cloud worker needs its own credentials/),
    );
  });

  it('terraform gives the runner (the scheduled function) no project-wide storage role', async () => {
    const tf = await loadTerraform();
    const runner = tf.locals.project_roles.runner;
    expect(runner.member).toContain('google_service_account.runner');
    expect(JSON.stringify(runner.roles)).not.toMatch(/storage|var\./);
  });
});
