/**
 * A trigger `window` on an `http-poll` job: the input has no time range to ask for, so a
 * runner catching up sent the same request once per window (a reviewer saw 5 identical
 * GETs, each printed). Windows are for inputs that read by time (gcs): the window is
 * refused, at its path, by `sluice job validate`, by `sluice job run` (no request sent), by
 * the API on save (400, nothing stored) and when a job stored before the rule is rendered.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsCollection } from '../../functions/jobs/store.ts';
import { parseJobYaml } from '../../shared/job/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bearer, bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';
import { json, jsonInit } from '../helpers/http.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-poll-window-'));
let server: Server;
let base: string;
let requests = 0;
let t: TestApp;
let admin: Record<string, string>;

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.setHeader('content-type', 'application/json');
    res.end('[{"n":1}]');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await testApp();
  admin = bearer(await bootstrapTestAdmin(t));
  await t.request('/api/workers', jsonInit('POST', { id: 'w1' }, admin));
});
afterAll(async () => {
  server.close();
  await t.close();
});

const windowed = (schedule: 'interval' | 'cron', url = 'https://example.org/s') =>
  `name: windowed\ninput:\n  http-poll:\n    url: ${url}\n    trigger:\n      ${schedule}:\n        ${
    schedule === 'interval' ? 'duration: 1h' : "cron: '0 * * * *'"
  }\n        window:\n          size: 1h\n          start:\n            tracked: position\noutput:\n  print: {}\n`;

const refusal = (schedule: string, where: Record<string, unknown> = {}) =>
  expect.objectContaining({
    path: `input.http-poll.trigger.${schedule}.window`,
    message: expect.stringMatching(/read by time.*gcs/),
    ...where,
  });

describe('a window on an http-poll trigger', () => {
  it('is refused at validation, at its path, on both levels and both schedules', () => {
    for (const schedule of ['interval', 'cron'] as const) {
      for (const level of ['saved', 'rendered'] as const) {
        const parsed = parseJobYaml(windowed(schedule), { level });
        expect(parsed.ok, `${schedule} ${level}`).toBe(false);
        if (!parsed.ok) expect(parsed.errors).toEqual([refusal(schedule, { line: 9 })]);
      }
    }
  });

  it('is refused by `sluice job validate` (exit 1)', async () => {
    const file = join(dir, 'validate.yaml');
    writeFileSync(file, windowed('interval'));
    const r = await runCli(['job', 'validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('input.http-poll.trigger.interval.window');
  });

  it('is refused by `sluice job run` before any request is sent (exit 1)', async () => {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, windowed('interval', `${base}/poll`));
    const before = requests;
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['bin/sluice.js', 'job', 'run', file, '--state-dir', join(dir, 'state')],
        { env: process.env },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      // A run that is not refused polls on until stopped: stop it once it printed an event.
      child.stdout.once('data', () => child.kill('SIGINT'));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.stdout).toBe('');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/input\.http-poll\.trigger\.interval\.window: .*read by time/);
    expect(requests).toBe(before);
  });

  it('is refused on save (400 at its path), and nothing is stored', async () => {
    const res = await t.request('/api/jobs/windowed', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/yaml' },
      body: windowed('cron'),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).error.details).toEqual([refusal('cron')]);
    expect((await t.request('/api/jobs/windowed', { headers: admin })).status).toBe(404);
  });

  it('is refused when a job stored before the rule is rendered for a worker', async () => {
    const plain = {
      name: 'stored-windowed',
      input: { 'http-poll': { url: 'https://example.org/s', trigger: { interval: { duration: '1h' } } } },
      output: { print: {} },
    };
    const saved = await t.request('/api/jobs/stored-windowed', jsonInit('PUT', plain, admin));
    expect(saved.status).toBe(201);
    // As stored before the rule existed: straight into the job's record.
    const old = structuredClone(plain);
    Object.assign(old.input['http-poll'].trigger.interval, { window: { size: '1h' } });
    await jobsCollection(await t.deps.clients.firestore(), 'default')
      .doc('stored-windowed')
      .update({ definition_json: JSON.stringify(old) });

    const res = await t.request('/api/jobs/stored-windowed/render?worker=w1', { headers: admin });
    expect(res.status).toBe(400);
    expect((await json(res)).error.details).toEqual([
      expect.objectContaining({
        path: 'input.http-poll.trigger.interval.window',
        message: expect.stringMatching(/^worker w1: .*read by time/),
      }),
    ]);
  });
});
