/**
 * An http-poll run reports like a gcs run: `job-run-ended` comes once the output has
 * delivered what the run produced (a job chained on it must not start before), says
 * `failed: true|false`, and comes for a failed poll too, after the run's `job-errors`.
 * Before, it came as soon as the events were handed to the output (the http-post endpoint
 * had received nothing yet), had no `failed`, and a failed poll ended without it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { MessageSource, Output, RunReport } from '../../functions/runner/types.ts';
import type { SluiceEvent } from '../../shared/events/vocabulary.ts';
import { validateJob } from '../../shared/job/validate.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-poll-ended-'));
let server: Server;
let base: string;
/** Events the http-post endpoint (`/sink`) accepted so far. */
let received = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (req.url === '/events') {
        res.setHeader('content-type', 'application/json');
        res.end('[{"n":1},{"n":2},{"n":3}]');
      } else if (req.url === '/broken') {
        res.statusCode = 503;
        res.end('try later');
      } else if (req.url === '/sink') {
        received += body.split('\n').filter(Boolean).length;
        res.end();
      } else {
        res.statusCode = 400;
        res.end('no such thing');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const silentPrint: Output = { async write() {}, async close() {} };

/** Two messages for a `message` trigger: the job runs twice, then its trigger ends. */
const twoMessages: MessageSource = {
  subscribe(listener) {
    for (const id of ['m1', 'm2'])
      listener({
        id,
        type: 'user-generated',
        kind: 'user',
        source: 'server',
        time: new Date().toISOString(),
        payload: {},
      } as SluiceEvent);
    return () => {};
  },
};

async function run(
  job: Record<string, unknown>,
  onReport: (r: RunReport) => void = () => {},
  messages?: MessageSource,
) {
  const checked = validateJob({ name: 'poll', ...job }, { level: 'rendered' });
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  const reports: RunReport[] = [];
  let error: Error | undefined;
  try {
    await runJob(checked.job, {
      worker: 'w',
      output: silentPrint,
      ...fileStores(mkdtempSync(join(dir, 'state-'))),
      signal: new AbortController().signal,
      report: (r) => {
        reports.push(r);
        onReport(r);
      },
      ...(messages ? { messages } : {}),
    });
  } catch (err) {
    error = err as Error;
  }
  return { reports, error, types: reports.map((r) => r.type) };
}

const ended = (reports: RunReport[]) => reports.filter((r) => r.type === 'job-run-ended');

describe('an http-poll run', () => {
  it('ends after its output delivered the events, with failed: false', async () => {
    let deliveredAtEnd: number | undefined;
    const before = received;
    const { reports, error } = await run(
      {
        input: { 'http-poll': { url: `${base}/events`, json: true } },
        output: { 'http-post': { url: `${base}/sink` } },
      },
      (r) => {
        if (r.type === 'job-run-ended') deliveredAtEnd = received - before;
      },
    );
    expect(error).toBeUndefined();
    expect(deliveredAtEnd).toBe(3);
    expect(ended(reports)).toEqual([
      { type: 'job-run-ended', payload: expect.objectContaining({ events: 3, failed: false }) },
    ]);
    expect(ended(reports)[0]!.payload.ms).toEqual(expect.any(Number));
  });

  it('ends with failed: true when its output could not deliver, after the output said why, once', async () => {
    const { reports, error, types } = await run({
      input: { 'http-poll': { url: `${base}/events`, json: true } },
      output: { 'http-post': { url: `${base}/refuses` } },
    });
    expect(error?.message).toContain('answered 400');
    expect(types).toEqual(['job-run-started', 'job-errors', 'job-run-ended', 'job-metrics']);
    expect(reports[1]!.payload).toMatchObject({ output: 'http-post', status: 400 });
    expect(reports[2]!.payload).toMatchObject({ events: 3, failed: true });
  });

  it('that fails to poll still ends, failed: true, after its job-errors (one-shot)', async () => {
    const { reports, error, types } = await run({
      input: { 'http-poll': { url: `${base}/broken`, json: true } },
      output: { 'http-post': { url: `${base}/sink` } },
    });
    expect(error?.message).toContain('answered 503');
    expect(types).toEqual(['job-run-started', 'job-errors', 'job-run-ended', 'job-metrics']);
    // The run's error quotes the answer; the report keeps it apart, in `answer` (viewers do not see it).
    expect(`${reports[1]!.payload.reason}: ${reports[1]!.payload.answer}`).toBe(error?.message);
    expect(reports[1]!.payload.reason).toMatch(/\/broken answered 503$/);
    expect(reports[2]!.payload).toMatchObject({ events: 0, failed: true });
  });

  it('that fails to poll still ends, failed: true, on every run of a triggered job', async () => {
    const { reports, error, types } = await run(
      {
        input: { 'http-poll': { url: `${base}/broken`, json: true, trigger: { message: { limit: 2 } } } },
        output: { print: {} },
      },
      () => {},
      twoMessages,
    );
    expect(error).toBeUndefined();
    const each = ['job-run-started', 'job-errors', 'job-run-ended', 'job-metrics'];
    expect(types).toEqual([...each, ...each]);
    expect(ended(reports).map((r) => r.payload.failed)).toEqual([true, true]);
    expect(reports.filter((r) => r.type === 'job-errors').map((r) => r.payload.reason)).toEqual([
      expect.stringContaining('answered 503'),
      expect.stringContaining('answered 503'),
    ]);
  });
});

describe('sluice job run of an http-poll job', () => {
  function jobRun(url: string) {
    const file = join(dir, `${url.split('/').pop()}.yaml`);
    writeFileSync(
      file,
      `name: poll\ninput:\n  http-poll:\n    url: ${url}\n    json: true\noutput:\n  print: {}\n`,
    );
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['bin/sluice.js', 'job', 'run', file, '--state-dir', join(dir, 'cli-state')],
        {
          env: process.env,
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }
  const reported = (stderr: string) =>
    stderr
      .split('\n')
      .filter((line) => /^job-[a-z-]+ \{/.test(line))
      .map((line) => {
        const [type, ...rest] = line.split(' ');
        return { type, payload: JSON.parse(rest.join(' ')) as Record<string, unknown> };
      });

  it('prints job-run-ended with failed: false after a poll, and with failed: true after a failed one (exit 1)', async () => {
    const ok = await jobRun(`${base}/events`);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    expect(reported(ok.stderr).find((r) => r.type === 'job-run-ended')?.payload).toMatchObject({
      events: 3,
      failed: false,
    });

    const broken = await jobRun(`${base}/broken`);
    expect(broken.code).toBe(1);
    expect(reported(broken.stderr).map((r) => r.type)).toEqual([
      'job-run-started',
      'job-errors',
      'job-run-ended',
      'job-metrics',
    ]);
    expect(reported(broken.stderr)[2]!.payload).toMatchObject({ events: 0, failed: true });
  });
});
