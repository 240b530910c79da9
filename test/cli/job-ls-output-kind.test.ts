/**
 * `GET /api/jobs` names each job's output kind (`output_kind`, from its saved definition),
 * so `sluice job ls` lists jobs with one request a page and no `GET /api/jobs/{name}` per
 * job: a job deleted while the list is read no longer fails the whole listing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobsCollection } from '../../functions/jobs/store.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { json } from '../helpers/http.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
let admin: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'sluice-job-ls-kind-'));
/** Paths the served app was asked for, in order. */
const asked: string[] = [];
/** Run once after the next answer to `GET /api/jobs` is made (before it is sent). */
let afterList: (() => Promise<void>) | undefined;

const JOBS = {
  copy: 'name: copy\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  gcs:\n    bucket-name: out-bucket\n    object-name: "x/{part}.ndjson"\n',
  idle: 'name: idle\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  discard: {}\n',
  shown: 'name: shown\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  print: {}\n',
  gone: 'name: gone\ninput:\n  http-poll:\n    url: https://example.org/s\noutput:\n  print: {}\n',
};

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  admin = bearer(token);
  const fetch = t.app.fetch;
  const counted = {
    ...t,
    app: {
      ...t.app,
      fetch: async (req: Request, ...rest: unknown[]) => {
        const url = new URL(req.url);
        asked.push(`${req.method} ${url.pathname}`);
        const answer = await (fetch as (r: Request, ...x: unknown[]) => Response | Promise<Response>)(
          req,
          ...rest,
        );
        if (req.method === 'GET' && url.pathname === '/api/jobs' && afterList) {
          const then = afterList;
          afterList = undefined;
          await then();
        }
        return answer;
      },
    },
  } as TestApp;
  server = await serveTestApp(counted);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  for (const [name, yaml] of Object.entries(JOBS)) {
    writeFileSync(join(dir, `${name}.yaml`), yaml);
    expect((await runCli(['job', 'apply', join(dir, `${name}.yaml`)], { env })).code).toBe(0);
  }
});
afterAll(async () => {
  await server.close();
  await t.close();
});

it('GET /api/jobs and GET /api/jobs/{name} name the output kind', async () => {
  const list = await json(await t.request('/api/jobs', { headers: admin }));
  expect(
    Object.fromEntries(list.map((j: { name: string; output_kind: unknown }) => [j.name, j.output_kind])),
  ).toEqual({ copy: 'gcs', gone: 'print', idle: 'discard', shown: 'print' });
  expect(await json(await t.request('/api/jobs/copy', { headers: admin }))).toMatchObject({
    name: 'copy',
    output_kind: 'gcs',
  });
  const doc = await json(await t.request('/api/openapi.json'));
  expect(doc.components.schemas.JobSummary.properties.output_kind).toBeDefined();
  expect(doc.components.schemas.JobSummary.required).toContain('output_kind');
});

it('names the output kind of a job saved before it was kept beside the definition', async () => {
  const { FieldValue } = await import('@google-cloud/firestore');
  const db = await t.deps.clients.firestore();
  await jobsCollection(db, 'default').doc('idle').update({ output_kind: FieldValue.delete() });
  const list = await json(await t.request('/api/jobs', { headers: admin }));
  expect(list.find((j: { name: string }) => j.name === 'idle')).toMatchObject({ output_kind: 'discard' });
});

it('job ls reads the list only, with no request per job', async () => {
  asked.length = 0;
  const ls = await runCli(['job', 'ls', '-o', 'json'], { env });
  expect(ls.code, ls.stderr).toBe(0);
  expect(asked.filter((p) => p.startsWith('GET /api/jobs/'))).toEqual([]);
  expect(asked.filter((p) => p === 'GET /api/jobs')).toHaveLength(1);
  const rows = JSON.parse(ls.stdout) as { name: string; output: string | null }[];
  expect(Object.fromEntries(rows.map((r) => [r.name, r.output]))).toEqual({
    copy: 'gcs',
    gone: 'print',
    idle: 'discard',
    shown: 'print',
  });
  const table = await runCli(['job', 'ls'], { env });
  expect(table.stdout).toMatch(/copy\s+1\s+saved\s+.*gcs\s+-/);
});

it('job ls lists what the list answered when a job is deleted meanwhile', async () => {
  afterList = async () => {
    await jobsCollection(await t.deps.clients.firestore(), 'default')
      .doc('gone')
      .delete();
  };
  const ls = await runCli(['job', 'ls'], { env });
  expect(ls.code, ls.stderr).toBe(0);
  expect(ls.stdout).toMatch(/gone\s+1\s+saved\s+.*print/);
  expect(ls.stdout).toMatch(/shown\s+1\s+saved\s+.*print/);
});
