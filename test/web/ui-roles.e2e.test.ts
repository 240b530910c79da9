/**
 * The web UI for each role, and its answers to what goes wrong: Debian's Chromium against
 * the local stack (in this process, on the test run's emulators), as in ui.e2e.test.ts.
 * Viewers and operators land on Jobs and are offered only what their role may do; a
 * viewer is told a failed deployment's reason is withheld; a malformed address, a
 * missing worker or job, an ended session and too many failed sign-ins each say so, once.
 * The sign-in limit test goes last: it blocks sign-ins from this address for a minute.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type APIRequestContext, request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FAILURES_PER_MINUTE } from '../../functions/auth/rate-limit.ts';
import { type Stack, startStack } from '../../local/stack.ts';
import { testProjectId } from '../helpers/app.ts';
import { launchChromium, type TestBrowser, type WatchedPage } from './browser.ts';

const ADMIN_PASSWORD = 'web-roles-test-password-1';
const VIEWER = { username: 'vera', password: 'vera-viewer-password-1' };
const OPERATOR = { username: 'otto', password: 'otto-operator-password-1' };
const JOB = 'roles-demo';
const BROKEN = 'roles-broken';
const SESSION_ENDED = 'Your session ended; sign in again.';
/** How long a step may wait in the browser: short, so that a missing element fails quickly. */
const STEP_MS = 10_000;
const SHOTS = resolve(import.meta.dirname, '../../test-results/screenshots');

let stack: Stack;
let chromium: TestBrowser;
let admin: APIRequestContext;
const work = mkdtempSync(join(tmpdir(), 'sluice-web-roles-'));

beforeAll(async () => {
  chromium = await launchChromium(); // first: without Chromium, fail before starting anything
  stack = await startStack({
    dataDir: join(work, 'data'),
    port: 0,
    env: { ...process.env, SLUICE_ADMIN_PASSWORD: ADMIN_PASSWORD },
    projectId: testProjectId(),
  });
  const anonymous = await request.newContext({ baseURL: stack.url, ignoreHTTPSErrors: true });
  const token = await anonymous.post('/api/tokens/create/user', {
    data: { username: 'admin', password: ADMIN_PASSWORD },
  });
  expect(token.status()).toBe(201);
  admin = await request.newContext({
    baseURL: stack.url,
    ignoreHTTPSErrors: true,
    extraHTTPHeaders: { authorization: `Bearer ${(await token.json()).token}` },
  });
  await anonymous.dispose();
  for (const [user, role] of [
    [VIEWER, 'viewer'],
    [OPERATOR, 'operator'],
  ] as const) {
    const created = await admin.post('/api/users', { data: { ...user, role } });
    expect(created.status(), await created.text()).toBe(201);
  }
  const saved = await admin.put(`/api/jobs/${JOB}`, {
    data: {
      name: JOB,
      context: { path: '/api/health' },
      input: { 'http-poll': { url: `${stack.url}{{path}}`, trigger: { interval: { duration: '1h' } } } },
      output: { print: {} },
    },
  });
  expect(saved.status(), await saved.text()).toBe(201);
  mkdirSync(SHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await admin?.dispose();
  await stack?.stop();
}, 60_000);

async function newPage(): Promise<WatchedPage> {
  const page = await chromium.newPage({ baseURL: stack.url, ignoreHTTPSErrors: true });
  page.setDefaultTimeout(STEP_MS);
  return page;
}

async function signIn(page: WatchedPage, user: { username: string; password: string }) {
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A fresh browser signed in as `user` from `/`, as someone opening the UI would. */
async function signedIn(user: { username: string; password: string }): Promise<WatchedPage> {
  const page = await newPage();
  await page.goto('/');
  await signIn(page, user);
  return page;
}

const shot = (page: WatchedPage, name: string) =>
  page.screenshot({ path: join(SHOTS, `roles-${name}.png`), fullPage: true });

const asAdmin = { username: 'admin', password: ADMIN_PASSWORD };
const addKeyForms = (page: WatchedPage) => page.getByRole('form', { name: 'Add a key' });
/** What the UI shows instead of an editor the role may not use (not the API's 403, which says "this needs the admin role"). */
const needsRole = (role: 'admin' | 'operator') => `p.needs-role:has-text("needs the ${role} role (you have")`;

describe('the web UI, by role', () => {
  it('lands a viewer and an operator on Jobs, without a link to the Context workspace', async () => {
    for (const user of [VIEWER, OPERATOR]) {
      const page = await signedIn(user);
      await page.getByRole('heading', { name: 'Jobs', exact: true }).waitFor();
      expect(new URL(page.url()).pathname, user.username).toBe('/jobs');
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link', { name: 'Context' }).count()).toBe(0);
      expect(page.takeConsoleErrors(), user.username).toEqual([]);
      await page.context().close();
    }
  }, 60_000);

  it('offers a viewer no editor that needs admin and no deploy buttons', async () => {
    const page = await signedIn(VIEWER);
    page.takeConsoleErrors(); // where the sign-in landed is the test above's
    // The workspace, if opened anyway, says what it needs; nothing that looks usable.
    await page.goto('/context');
    await page.locator(needsRole('admin')).waitFor();
    expect(await addKeyForms(page).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Export to a JSON file' }).count()).toBe(0);
    expect(await page.getByLabel('Import from a file (replaces the global context)').count()).toBe(0);

    await page.goto('/workers/local');
    await page.getByRole('heading', { name: 'Deployed jobs' }).waitFor();
    await page.getByRole('region', { name: 'Context overrides' }).locator(needsRole('admin')).waitFor();
    expect(await addKeyForms(page).count()).toBe(0);
    expect(await page.getByText('Replace all keys (no merge)').count()).toBe(0);

    await page.goto(`/jobs/${JOB}`);
    const deployments = page.getByRole('region', { name: 'Deployments' });
    await deployments.locator(needsRole('operator')).waitFor();
    for (const name of ['Deploy', 'Stage current version', 'Undeploy everywhere'])
      expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    expect(await page.getByRole('group', { name: 'Deploy to workers' }).count()).toBe(0);
    await shot(page, '01-viewer-job');

    await page.getByRole('tab', { name: 'Context' }).click();
    await page.getByRole('tabpanel').locator(needsRole('admin')).waitFor();
    expect(await addKeyForms(page).count()).toBe(0);

    await page.getByRole('tab', { name: 'Rendered for a worker' }).click();
    await page.getByLabel('Worker', { exact: true }).selectOption('local');
    await page.locator('pre.rendered-definition', { hasText: `${stack.url}/api/health` }).waitFor();
    await page.getByRole('tabpanel').locator(needsRole('admin')).waitFor();
    expect(await page.locator('table.resolved').count()).toBe(0);

    // No request the API refused: nothing asked for that the role may not have.
    expect(page.takeConsoleErrors()).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('offers an operator Deploy, Stage and Undeploy, but not the context editors', async () => {
    const page = await signedIn(OPERATOR);
    page.takeConsoleErrors(); // where the sign-in landed is the first test's
    await page.goto(`/jobs/${JOB}`);
    await page.getByRole('button', { name: 'Stage current version' }).waitFor();
    await page
      .getByRole('group', { name: 'Deploy to workers' })
      .getByRole('checkbox', { name: /^local/ })
      .check();
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.getByRole('status').getByText('Deployed to local.').waitFor();
    await page.getByRole('button', { name: 'Undeploy from local' }).click();
    await page.getByRole('status').getByText('Undeployed from local.').waitFor();
    expect((await (await admin.get(`/api/jobs/${JOB}`)).json()).deployments).toEqual([]);

    await page.getByRole('tab', { name: 'Context' }).click();
    await page.getByRole('tabpanel').locator(needsRole('admin')).waitFor();
    expect(await addKeyForms(page).count()).toBe(0);

    await page.goto('/workers/local');
    await page.getByRole('region', { name: 'Context overrides' }).locator(needsRole('admin')).waitFor();
    expect(await addKeyForms(page).count()).toBe(0);
    expect(page.takeConsoleErrors()).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('keeps the admin’s landing page and editors', async () => {
    const page = await signedIn(asAdmin);
    await page.getByRole('heading', { name: 'Context workspace' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    await addKeyForms(page).waitFor();
    await page.goto('/workers/local');
    await addKeyForms(page).waitFor();
    expect(page.takeConsoleErrors()).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('tells a viewer that a failed deployment’s reason is withheld, and shows operators the reason', async () => {
    const saved = await admin.put(`/api/jobs/${BROKEN}`, {
      data: `name: ${BROKEN}\ninput:\n  http-poll:\n    url: http://169.254.169.254/computeMetadata/v1/\noutput:\n  print: {}\n`,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(saved.status()).toBe(201);
    expect((await admin.post(`/api/jobs/${BROKEN}/deploy`, { data: { workers: ['local'] } })).status()).toBe(
      200,
    );
    // The local worker runs it, the egress guard refuses the metadata address, and the
    // worker reports the reason with its next heartbeat.
    await expect
      .poll(async () => (await (await admin.get(`/api/jobs/${BROKEN}`)).json()).deployments[0]?.error ?? '', {
        timeout: 45_000,
        interval: 500,
      })
      .toContain('egress refused');

    const viewer = await signedIn(VIEWER);
    await viewer.goto(`/jobs/${BROKEN}`);
    const row = viewer.locator('section.deploy tr[data-worker="local"]');
    await row.getByText('failed').waitFor();
    await row.getByText('reason withheld: operators see it').waitFor();
    expect(await row.innerText()).not.toContain('egress refused');
    await shot(viewer, '02-viewer-withheld-reason');
    expect(viewer.takeConsoleErrors()).toEqual([]);
    await viewer.context().close();

    const operator = await signedIn(OPERATOR);
    await operator.goto(`/jobs/${BROKEN}`);
    const reason = operator.locator('section.deploy tr[data-worker="local"] .deployment-reason');
    await reason.waitFor();
    expect(await reason.innerText()).toContain('egress refused');
    await operator.context().close();

    expect(
      (await admin.post(`/api/jobs/${BROKEN}/undeploy`, { data: { workers: ['local'] } })).status(),
    ).toBe(200);
    expect((await admin.delete(`/api/jobs/${BROKEN}`)).status()).toBe(204);
  }, 90_000);
});

describe('the web UI when something is wrong', () => {
  it('shows Not found for an address with a malformed percent-encoding', async () => {
    const page = await signedIn(asAdmin);
    for (const path of ['/jobs/%E0%A4%A', '/workers/%E0%A4%A', '/jobs/%']) {
      await page.goto(path);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      expect(page.takeConsoleErrors(), path).toEqual([]);
    }
    await page.getByRole('link', { name: 'Go to the Context workspace' }).click();
    await page.getByRole('heading', { name: 'Context workspace' }).waitFor();
    await page.context().close();
  }, 60_000);

  it('shows only the not-found message for a worker that does not exist', async () => {
    const page = await signedIn(asAdmin);
    await page.goto('/workers/nope');
    await page.getByRole('alert').getByText('no worker nope').waitFor();
    await page.waitForTimeout(1000); // whatever else the page would show, it shows by now
    expect(await addKeyForms(page).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Context overrides' }).count()).toBe(0);
    expect(await page.getByText('Replace all keys (no merge)').count()).toBe(0);
    expect(await page.getByText('no worker nope').count()).toBe(1);
    // The 404 itself, and nothing else.
    const errors = page.takeConsoleErrors();
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.filter((e) => !e.includes('404'))).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('says "no job" once for a job that does not exist', async () => {
    const page = await signedIn(asAdmin);
    await page.goto('/jobs/doesnotexist');
    await page.getByRole('alert').getByText('no job doesnotexist').waitFor();
    await page.waitForTimeout(1000);
    expect(await page.getByText('no job doesnotexist').count()).toBe(1);
    expect(await page.getByRole('tab').count()).toBe(0);
    // The 404s themselves, and nothing else.
    const errors = page.takeConsoleErrors();
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.filter((e) => !e.includes('404'))).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('says the session ended when it did, and not on a first visit or after signing out', async () => {
    const page = await newPage();
    await page.goto('/');
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    expect(await page.getByText(SESSION_ENDED).count()).toBe(0);
    await signIn(page, asAdmin);
    await page.getByRole('heading', { name: 'Context workspace' }).waitFor();

    // The session cookie expires (or the server ends the session): the next request gets 401.
    await page.context().clearCookies({ name: 'sluice_session' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    await page.getByRole('status').getByText(SESSION_ENDED).waitFor();
    await shot(page, '03-session-ended');
    await signIn(page, asAdmin);
    await page.getByRole('heading', { name: 'Workers', exact: true }).waitFor();
    expect(await page.getByText(SESSION_ENDED).count()).toBe(0);

    // The same after a reload: the page finds the session gone when it starts.
    await page.context().clearCookies({ name: 'sluice_session' });
    await page.reload();
    await page.getByRole('status').getByText(SESSION_ENDED).waitFor();
    await signIn(page, asAdmin);

    // Signing out on purpose is not a session that ended.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    expect(await page.getByText(SESSION_ENDED).count()).toBe(0);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    expect(await page.getByText(SESSION_ENDED).count()).toBe(0);
    expect(page.takeConsoleErrors().filter((e) => !e.includes('401'))).toEqual([]);
    await page.context().close();
  }, 60_000);

  // Last: after it, every sign-in from this address is refused for a minute.
  it('says when to try again after too many failed sign-ins', async () => {
    const page = await newPage();
    await page.goto('/login');
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    for (let i = 0; i < MAX_FAILURES_PER_MINUTE; i++) {
      const res = await page.request.post('/api/auth/login', {
        data: { username: VIEWER.username, password: `wrong-password-${i}` },
      });
      expect(res.status()).toBe(401);
    }
    await page.getByLabel('Username').fill(VIEWER.username);
    await page.getByLabel('Password').fill('one-more-wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/^too many attempts; try again in [1-6]?\d s$/);
    await shot(page, '04-sign-in-rate-limited');
    expect(page.takeConsoleErrors()).toEqual([expect.stringContaining('429')]);
    await page.context().close();
  }, 60_000);
});
