/**
 * The web UI end to end: the local stack (in this process, on the test run's emulators)
 * and Debian's Chromium. Each step acts and asserts the way an operator would: through
 * labels, roles and visible text, then checks the result through the API. Screenshots
 * of every page go to test-results/screenshots/ (git-ignored).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type APIRequestContext, request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent, eventIdTime, eventsCollection, storedEvent } from '../../functions/events/event-log.ts';
import { type Stack, startStack } from '../../local/stack.ts';
import { testProjectId } from '../helpers/app.ts';
import { launchChromium, type TestBrowser, type WatchedPage } from './browser.ts';

const PASSWORD = 'web-ui-test-password-1';
const JOB = 'web-demo';
const SHOTS = resolve(import.meta.dirname, '../../test-results/screenshots');
const JOB_YAML = `name: ${JOB}
context:
  poll_every: 10m
  wanted: ok
input:
  http-poll:
    url: '{{status_url}}'
    json: true
    trigger:
      interval:
        duration: '{{poll_every}}'
actions:
  - filter: "event.status == '{{wanted}}'"
  - rename:
      status: health
output:
  print: {}
`;

let stack: Stack;
let chromium: TestBrowser;
let page: WatchedPage;
let admin: APIRequestContext;
const work = mkdtempSync(join(tmpdir(), 'sluice-web-'));
const PROJECT = testProjectId();

beforeAll(async () => {
  chromium = await launchChromium(); // first: without Chromium, fail before starting anything
  stack = await startStack({
    dataDir: join(work, 'data'),
    port: 0,
    env: { ...process.env, SLUICE_ADMIN_PASSWORD: PASSWORD },
    projectId: PROJECT,
  });
  const anonymous = await request.newContext({ baseURL: stack.url, ignoreHTTPSErrors: true });
  const token = await anonymous.post('/api/tokens/create/user', {
    data: { username: 'admin', password: PASSWORD },
  });
  expect(token.status()).toBe(201);
  admin = await request.newContext({
    baseURL: stack.url,
    ignoreHTTPSErrors: true,
    extraHTTPHeaders: { authorization: `Bearer ${(await token.json()).token}` },
  });
  await anonymous.dispose();
  // The job polls the stack itself; status_url is global, poll_every has a default in the job.
  const global = await admin.post('/api/contexts/update-global', {
    data: { status_url: `${stack.url}/api/health` },
  });
  expect(global.status()).toBe(200);
  const saved = await admin.put(`/api/jobs/${JOB}`, {
    data: JOB_YAML,
    headers: { 'content-type': 'application/yaml' },
  });
  expect(saved.status()).toBe(201);
  mkdirSync(SHOTS, { recursive: true });
  page = await chromium.newPage({ baseURL: stack.url, ignoreHTTPSErrors: true, acceptDownloads: true });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await admin?.dispose();
  await stack?.stop();
}, 60_000);

afterEach(() => {
  expect(page.takeConsoleErrors()).toEqual([]);
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const text = (selector: string) => page.locator(selector).innerText();
const apiJson = async (path: string) => {
  const res = await admin.get(path);
  expect(res.status(), path).toBe(200);
  return await res.json();
};

describe('the web UI', () => {
  it('signs in with a session cookie and a CSRF cookie', async () => {
    const res = await page.goto('/');
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    await shot('01-sign-in');

    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('invalid username or password', { exact: false }).waitFor();
    expect(page.takeConsoleErrors()).toEqual([expect.stringContaining('401')]);

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Context workspace' }).waitFor();
    expect(await text('header .who')).toContain('admin');

    const cookies = Object.fromEntries((await page.context().cookies()).map((c) => [c.name, c]));
    expect(cookies.sluice_session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict' });
    expect(cookies.sluice_csrf).toMatchObject({ httpOnly: false, secure: true, sameSite: 'Strict' });
  }, 60_000);

  it('edits global keys with typed values and shows the API’s validation errors inline', async () => {
    const add = page.getByRole('form', { name: 'Add a key' });
    await add.getByLabel('Key').fill('poll_every');
    await add.getByLabel('Value').fill('5m');
    await add.getByRole('button', { name: 'Add key' }).click();
    await page.getByRole('status').getByText('Added poll_every.').waitFor();

    await add.getByLabel('Key').fill('batch');
    await add.getByLabel('Type').selectOption('number');
    await add.getByLabel('Value').fill('500');
    await add.getByRole('button', { name: 'Add key' }).click();
    await page.getByRole('status').getByText('Added batch.').waitFor();

    // A JSON editor for objects: a syntax error is caught before anything is sent.
    await add.getByLabel('Key').fill('limits');
    await add.getByLabel('Type').selectOption('json');
    await add.getByLabel('Value').fill('{"rows": 10, "tags": ["a"');
    await add.getByRole('button', { name: 'Add key' }).click();
    await add.getByText('not valid JSON').waitFor();
    await add.getByLabel('Value').fill('{"rows": 10, "tags": ["a"]}');
    await add.getByRole('button', { name: 'Add key' }).click();
    await page.getByRole('status').getByText('Added limits.').waitFor();

    // The API refuses a reserved key; its `details` appear next to the key field.
    await add.getByLabel('Key').fill('worker');
    await add.getByLabel('Type').selectOption('string');
    await add.getByLabel('Value').fill('nope');
    await add.getByRole('button', { name: 'Add key' }).click();
    await add.getByText('`worker` is reserved').waitFor();
    expect(await add.getByLabel('Key').getAttribute('aria-invalid')).toBe('true');
    expect(page.takeConsoleErrors()).toEqual([expect.stringContaining('400')]);
    await shot('02-context-inline-error');
    await add.getByLabel('Key').fill('');

    // Edit a value in place.
    await page.getByRole('button', { name: 'Edit batch' }).click();
    await page.getByLabel('Value of batch').fill('750');
    await page.getByRole('form', { name: 'Edit batch' }).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved batch.').waitFor();

    const row = (key: string) => page.locator(`.context-editor tr[data-key="${key}"]`);
    expect(await row('batch').innerText()).toMatch(/number\s+750/);
    expect(await row('poll_every').innerText()).toMatch(/string\s+"5m"/);
    expect(await row('limits').innerText()).toContain('object');
    await shot('03-context-workspace');

    expect(await apiJson('/api/contexts/global')).toEqual({
      status_url: `${stack.url}/api/health`,
      poll_every: '5m',
      batch: 750,
      limits: { rows: 10, tags: ['a'] },
    });
  }, 60_000);

  it('exports the global context to a file and imports one after a preview of the changes', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export to a JSON file' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^sluice-context-\d{4}-\d{2}-\d{2}\.json$/);
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    expect(exported).toMatchObject({ format: 'sluice-context/v1', global: { poll_every: '5m', batch: 750 } });

    const { limits: _, ...kept } = exported.global;
    const file = join(work, 'restore.json');
    writeFileSync(
      file,
      JSON.stringify({ ...exported, global: { ...kept, batch: 1000, owner: 'data-team' } }),
    );
    await page.getByLabel('Import from a file (replaces the global context)').setInputFiles(file);

    const preview = page.locator('section.preview');
    await preview.getByRole('heading', { name: 'Preview of restore.json' }).waitFor();
    expect(await preview.innerText()).toContain('1 added, 1 changed, 1 removed, 2 unchanged.');
    expect(await preview.locator('tr[data-key="owner"]').innerText()).toMatch(/added\s+owner/);
    expect(await preview.locator('tr[data-key="batch"]').innerText()).toMatch(/changed\s+batch\s+750\s+1000/);
    expect(await preview.locator('tr[data-key="limits"]').innerText()).toMatch(/removed\s+limits/);
    // Nothing changes before the operator applies it.
    expect((await apiJson('/api/contexts/global')).batch).toBe(750);
    await shot('04-context-import-preview');

    await preview.getByRole('button', { name: 'Apply import' }).click();
    await page.getByRole('status').getByText('Imported restore.json.').waitFor();
    await page.locator('.context-editor tr[data-key="owner"]').waitFor();
    expect(await page.locator('.context-editor tr[data-key="limits"]').count()).toBe(0);
    expect(await apiJson('/api/contexts/global')).toEqual({ ...kept, batch: 1000, owner: 'data-team' });
  }, 60_000);

  it('shows where each resolved key comes from, and a worker override moves it from global to worker', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();
    await page.getByRole('link', { name: JOB }).click();
    await page.getByRole('heading', { name: `Job ${JOB}` }).waitFor();
    await page.locator('pre.yaml', { hasText: "duration: '{{poll_every}}'" }).waitFor();
    // The actions in order, as written; the rendered view shows them with the context in.
    const actions = page.getByRole('region', { name: 'Actions', exact: true });
    expect(await actions.locator('li').allInnerTexts()).toEqual([
      "filter event.status == '{{wanted}}'",
      'rename status → health',
    ]);

    const resolved = async (worker: string) => {
      await page.getByRole('tab', { name: 'Rendered for a worker' }).click();
      await page.getByLabel('Worker', { exact: true }).selectOption(worker);
      const row = page.locator('table.resolved tr[data-key="poll_every"]');
      await page.locator('table.resolved caption', { hasText: `on ${worker}` }).waitFor();
      await row.waitFor();
      return row;
    };
    const onLocal = await resolved('local');
    expect(await onLocal.innerText()).toMatch(/poll_every\s+string\s+"5m"\s+global/);
    await page.locator('pre.rendered-definition', { hasText: '"duration": "5m"' }).waitFor();
    const renderedActions = page.getByRole('region', { name: 'Actions after context rendering' });
    expect(await renderedActions.locator('li').first().innerText()).toBe("filter event.status == 'ok'");
    await shot('05-job-rendered-global');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    const localRow = page.locator('tr[data-worker="local"]');
    await localRow.waitFor();
    expect(await localRow.innerText()).toContain('online');
    await shot('06-workers');

    await localRow.getByRole('link', { name: 'local' }).click();
    await page.getByRole('heading', { name: 'Worker local' }).waitFor();
    const add = page.getByRole('form', { name: 'Add a key' });
    await add.getByLabel('Key').fill('poll_every');
    await add.getByLabel('Value').fill('30m');
    await add.getByRole('button', { name: 'Add key' }).click();
    await page.getByRole('status').getByText('Added poll_every.').waitFor();
    expect(await apiJson('/api/contexts/worker/local')).toEqual({ poll_every: '30m' });
    await shot('07-worker-local');

    await page.goBack();
    await page.goBack();
    await page.getByRole('heading', { name: `Job ${JOB}` }).waitFor();
    expect(await (await resolved('local')).innerText()).toMatch(/poll_every\s+string\s+"30m"\s+worker/);
    await page.locator('pre.rendered-definition', { hasText: '"duration": "30m"' }).waitFor();
    await shot('08-job-rendered-worker');
    // Other workers still get the global value.
    expect(await (await resolved('cloud')).innerText()).toMatch(/"5m"\s+global/);
    expect(await apiJson(`/api/contexts/resolve?job=${JOB}&worker=local`)).toMatchObject({
      sources: { poll_every: 'worker' },
    });
  }, 60_000);

  it('deploys the job from its page', async () => {
    const workers = page.getByRole('group', { name: 'Deploy to workers' });
    await workers.getByRole('checkbox', { name: /^local/ }).check();
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.getByRole('status').getByText('Deployed to local.').waitFor();
    const deployment = page.locator('section.deploy tr[data-worker="local"]');
    await deployment.waitFor();
    expect(await text('dl.facts')).toContain('deployed');
    await shot('09-job-deployed');

    const job = await apiJson(`/api/jobs/${JOB}`);
    expect(job.state).toBe('deployed');
    expect(job.deployments.map((d: { worker: string }) => d.worker)).toEqual(['local']);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
    const row = page.locator(`tr[data-job="${JOB}"]`);
    await row.waitFor();
    expect(await row.innerText()).toMatch(/deployed/);
    expect(await row.innerText()).toContain('local');
    await shot('10-jobs');
  }, 60_000);

  it('shows the job’s output kind and what its runs delivered', async () => {
    await page.goto(`/jobs/${JOB}`);
    const output = page.getByRole('region', { name: 'Output' });
    expect(await output.locator('dd').first().innerText()).toBe('print');
    // The local worker runs the job at once and reports the run with its next heartbeat.
    const events = output.locator('dd[data-metric="events"]');
    await events.waitFor({ timeout: 45_000 });
    expect(Number(await events.innerText())).toBeGreaterThanOrEqual(1);
    expect(await output.locator('dd[data-metric="failures"]').innerText()).toBe('0');
    await shot('10b-job-output');
  }, 60_000);

  it('says why a deployment failed, on the job’s page', async () => {
    const broken = 'web-broken';
    const saved = await admin.put(`/api/jobs/${broken}`, {
      data: `name: ${broken}\ninput:\n  http-poll:\n    url: http://169.254.169.254/computeMetadata/v1/\noutput:\n  print: {}\n`,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(saved.status()).toBe(201);
    expect((await admin.post(`/api/jobs/${broken}/deploy`, { data: { workers: ['local'] } })).status()).toBe(
      200,
    );
    await page.goto(`/jobs/${broken}`);
    // The local worker runs it, the egress guard refuses the metadata address, and the worker
    // reports the reason with its next heartbeat; the page refreshes on its own.
    const reason = page.locator('section.deploy tr[data-worker="local"] .deployment-reason');
    await reason.waitFor({ timeout: 45_000 });
    expect(await reason.innerText()).toContain('egress refused');
    await shot('10c-job-failed');
    // Gone again, so that the later tests see the jobs they made.
    expect(
      (await admin.post(`/api/jobs/${broken}/undeploy`, { data: { workers: ['local'] } })).status(),
    ).toBe(200);
    expect((await admin.delete(`/api/jobs/${broken}`)).status()).toBe(204);
  }, 60_000);

  it('replaces a worker’s overrides wholesale and lists the jobs deployed to it', async () => {
    await page.goto('/workers/local');
    await page.getByRole('heading', { name: 'Worker local' }).waitFor();
    await page.getByRole('listitem').getByRole('link', { name: JOB }).waitFor();
    await page.getByText('Replace all keys (no merge)').click();
    await page
      .getByLabel('The whole map, as JSON; keys left out are removed')
      .fill('{"poll_every": "30m", "zone": "eu-west"}');
    await page.getByRole('button', { name: 'Replace all' }).click();
    await page.getByRole('status').getByText('Replaced all keys.').waitFor();
    expect(await page.locator('.context-editor tr[data-key="zone"]').innerText()).toContain('"eu-west"');
    expect(await apiJson('/api/contexts/worker/local')).toEqual({ poll_every: '30m', zone: 'eu-west' });
    await page
      .getByRole('table', { name: 'Latest events of worker local' })
      .locator('tr[data-type="context-changed"]')
      .first()
      .waitFor();
    await shot('12-worker-replaced');
  }, 60_000);

  it('sets a job override in the job’s Context tab, which then wins on every worker', async () => {
    await page.goto(`/jobs/${JOB}`);
    await page.getByRole('tab', { name: 'Context' }).click();
    const add = page.getByRole('form', { name: 'Add a key' });
    await add.getByLabel('Key').fill('poll_every');
    await add.getByLabel('Value').fill('1h');
    await add.getByRole('button', { name: 'Add key' }).click();
    await page.getByRole('status').getByText('Added poll_every.').waitFor();
    expect(await apiJson(`/api/contexts/job/${JOB}`)).toEqual({ poll_every: '1h' });
    await shot('13-job-context');

    await page.getByRole('tab', { name: 'Rendered for a worker' }).click();
    await page.getByLabel('Worker', { exact: true }).selectOption('local');
    await page.locator('table.resolved tr[data-key="poll_every"]', { hasText: 'job' }).waitFor();
    expect(await page.locator('table.resolved tr[data-key="poll_every"]').innerText()).toMatch(/"1h"\s+job/);
  }, 60_000);

  it('undeploys the job from a worker', async () => {
    await page.getByRole('button', { name: 'Undeploy from local' }).click();
    await page.getByRole('status').getByText('Undeployed from local.').waitFor();
    await page.getByText('Not deployed.').waitFor();
    expect((await apiJson(`/api/jobs/${JOB}`)).deployments).toEqual([]);
  }, 60_000);

  it('lists events live, filtered by job and type', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events' }).click();
    await page.getByLabel('Job').fill(JOB);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('table.events tr[data-type="job-deployed"]').first().waitFor();
    expect(new URL(page.url()).search).toBe(`?job=${JOB}`);

    await page.getByLabel('Job').fill('');
    await page.getByLabel('Type').fill('context-changed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('status').getByText('updating live').waitFor();
    // The status and some rows may still be the job filter's: wait until only this filter's rows are left.
    const changes = page.locator('table.events tbody tr[data-type="context-changed"]');
    const others = page.locator('table.events tbody tr:not([data-type="context-changed"])');
    await expect
      .poll(async () => (await others.count()) === 0 && (await changes.count()) > 0, { timeout: 10_000 })
      .toBe(true);
    const before = await changes.count();
    // A change made elsewhere shows up without a reload.
    await admin.post('/api/contexts/update-global', { data: { live_check: true } });
    await expect
      .poll(() => page.locator('table.events tbody tr[data-type="context-changed"]').count(), {
        timeout: 10_000,
      })
      .toBe(before + 1);
    await shot('14-events');
  }, 60_000);

  it('opens the events page on the newest events of a busy day, in one request', async () => {
    // 6,000 events of the last 12 hours, more than the page reads while catching up (5,000).
    const { Firestore } = await import('@google-cloud/firestore');
    const db = new Firestore({ projectId: PROJECT });
    const now = Date.now();
    // Each with the id of its own time, as a worker writing through the day gives them (buildEvent
    // never goes back in time within a process, and this one runs the stack: its ids say now).
    const busy = Array.from({ length: 6000 }, (_, i) => {
      const time = new Date(now - 12 * 3_600_000 + i * 7_000);
      const event = buildEvent(
        { type: 'user-generated', source: 'server', job: 'busy-log', payload: { n: i } },
        time,
      );
      return { ...event, id: `${eventIdTime(time)}-0000${i.toString(16).padStart(8, '0')}` };
    });
    for (let i = 0; i < busy.length; i += 500) {
      const batch = db.batch();
      for (const event of busy.slice(i, i + 500))
        batch.set(eventsCollection(db, 'default').doc(event.id), storedEvent(event));
      await batch.commit();
    }
    await db.terminate();
    const reads: string[] = [];
    const count = (req: { url(): string }) => {
      if (new URL(req.url()).pathname === '/api/events') reads.push(req.url());
    };
    page.on('request', count);
    await page.goto('/events?job=busy-log');
    // Rows of events (the table shows a "No events." row until the first answer).
    const rows = page.locator('table.events tbody tr[data-type]');
    await rows.first().waitFor();
    // The newest of them shows first, from the first request; the page keeps the newest 300.
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(300);
    expect(await rows.first().innerText()).toContain('{"n":5999}');
    expect(await rows.last().innerText()).toContain('{"n":5700}');
    page.off('request', count);
    // Without paging through the older ones.
    expect(reads[0]).toContain('order=newest');
    expect(
      reads.filter((url) => url.includes('cursor=')),
      reads.join('\n'),
    ).toEqual([]);
  }, 60_000);

  it('renders the API reference from the OpenAPI document at /api/docs', async () => {
    const res = await page.goto('/api/docs');
    expect(res!.headers()['content-security-policy']).toContain("default-src 'self'");
    await page.getByRole('heading', { name: /Sluice control plane API/ }).waitFor();
    const importOp = page.locator('section.operation', { hasText: 'POST /api/contexts/import' });
    expect(await importOp.innerText()).toContain('Request body');
    await importOp.getByRole('link', { name: 'ContextImport' }).first().click();
    expect(new URL(page.url()).hash).toBe('#schema-ContextImport');
    expect(await page.locator('#schema-ContextImport').innerText()).toContain('format');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, '15-api-docs.png') });
  }, 60_000);

  it('works from the keyboard: skip link, tabs with arrow keys', async () => {
    await page.goto(`/jobs/${JOB}`);
    await page.getByRole('heading', { name: `Job ${JOB}` }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.getByRole('tab', { name: 'Definition' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Context' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('table', { name: `Overrides of job ${JOB}` }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Context');
  }, 60_000);

  it('lists the first 100 jobs and loads the next page on demand', async () => {
    for (let i = 0; i < 100; i++) {
      const saved = await admin.put(`/api/jobs/paged-${String(i).padStart(3, '0')}`, {
        data: {
          name: `paged-${String(i).padStart(3, '0')}`,
          input: { 'http-poll': { url: 'http://example.com' } },
          output: { print: {} },
        },
      });
      expect(saved.status()).toBe(201);
    }
    await page.goto('/jobs');
    const rows = page.locator('tr[data-job]');
    await rows.nth(99).waitFor();
    expect(await rows.count()).toBe(100);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.locator('tr[data-job="web-demo"]').waitFor();
    expect(await rows.count()).toBe(101);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
  }, 60_000);

  it('signs out: the session stops working', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    const res = await page.request.get('/api/contexts/global');
    expect(res.status()).toBe(401);
  }, 60_000);
});
