/**
 * The `discard` output's job-metrics `bytes` counts the events it drops as JSON lines, as
 * `print` would have written them, whether they reach it as event objects (an http-poll
 * input, any job with actions) or as JSON lines already (a gcs input). It counted 0 bytes
 * for event objects.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { RunReport } from '../../functions/runner/types.ts';
import { validateJob } from '../../shared/job/validate.ts';

const ANSWER = [{ status: 'ok' }, { msg: 'café ☕' }, { n: 3, tags: ['ü', 'x'] }];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(ANSWER));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
});
afterAll(() => server.close());

/** Runs an http-poll job into `output`; returns the output's job-metrics and what print wrote. */
async function run(output: Record<string, unknown>, actions?: unknown[]) {
  const checked = validateJob(
    { name: 'dropped', input: { 'http-poll': { url, json: true } }, ...(actions ? { actions } : {}), output },
    { level: 'rendered' },
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  const written: Buffer[] = [];
  const stdout = new Writable({
    write(chunk, encoding, callback) {
      written.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
      callback();
    },
  });
  const reports: RunReport[] = [];
  await runJob(checked.job, {
    worker: 'w',
    output: createPrintOutput(stdout),
    ...fileStores(mkdtempSync(join(tmpdir(), 'sluice-discard-'))),
    signal: new AbortController().signal,
    report: (r) => reports.push(r),
  });
  const metrics = reports.find((r) => r.type === 'job-metrics' && r.payload.output)?.payload;
  return { metrics, printed: Buffer.concat(written) };
}

it('counts the bytes of the JSON lines of event objects it drops, as print writes them', async () => {
  const printed = await run({ print: {} });
  expect(printed.metrics).toMatchObject({ output: 'print', events: 3, bytes: printed.printed.length });
  const expected = Buffer.byteLength(ANSWER.map((e) => `${JSON.stringify(e)}\n`).join(''));
  expect(printed.printed.length).toBe(expected);

  const dropped = await run({ discard: {} });
  expect(dropped.printed.length).toBe(0);
  expect(dropped.metrics).toEqual({
    output: 'discard',
    events: 3,
    bytes: expected,
    batches: 1,
    retries: 0,
    failures: 0,
  });
});

it('counts the events actions hand it, not those they dropped', async () => {
  const dropped = await run({ discard: {} }, [{ filter: 'has(event.msg)' }]);
  expect(dropped.metrics).toMatchObject({
    output: 'discard',
    events: 1,
    bytes: Buffer.byteLength(`${JSON.stringify({ msg: 'café ☕' })}\n`),
  });
});
