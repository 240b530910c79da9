/**
 * The `print` output's job-metrics `bytes` is the UTF-8 bytes it wrote to the stream (the
 * JSON lines and their newlines), whether the events reached it as objects (`write`: an
 * http-poll input, or any job with actions) or as JSON lines already (`writeJsonLines`).
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputFor } from '../../functions/runner/components.ts';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { RunEvent, RunReport } from '../../functions/runner/types.ts';
import type { JobDefinition } from '../../shared/job/schema.ts';
import { validateJob } from '../../shared/job/validate.ts';

const EVENTS: RunEvent[] = [{ status: 'ok' }, { msg: 'café ☕' }, { n: 3, tags: ['ü', 'x'] }];

/** A stream that keeps everything written to it. */
function collector() {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk, encoding, callback) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
      callback();
    },
  });
  return { stream, written: () => Buffer.concat(chunks) };
}

/** A job printing what `input` reads, its defaults filled in as the runner gets it. */
function printJob(input: Record<string, unknown>): JobDefinition {
  const checked = validateJob({ name: 'print-bytes', input, output: { print: {} } }, { level: 'rendered' });
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.job;
}

/** The print output as the runner builds it (through the component registry), writing to a collector. */
function builtPrint() {
  const out = collector();
  const built = outputFor(printJob({ 'http-poll': { url: 'http://127.0.0.1:1/' } }), {
    print: createPrintOutput(out.stream),
    report: () => {},
  });
  return { ...built, written: out.written };
}

describe('the print output counts the bytes it wrote', () => {
  it('for events written as objects', async () => {
    const { output, metrics, written } = builtPrint();
    await output.write(EVENTS);
    await output.write([]);
    await output.acknowledge?.();

    expect(written().toString()).toContain('café ☕');
    expect(metrics).toMatchObject({ events: 3, bytes: written().length });
    expect(metrics.bytes).toBe(Buffer.byteLength(EVENTS.map((e) => `${JSON.stringify(e)}\n`).join('')));
  });

  it('for events handed over as JSON lines, the same as for objects', async () => {
    const asLines = builtPrint();
    const text = EVENTS.map((e) => `${JSON.stringify(e)}\n`).join('');
    await asLines.output.writeJsonLines!({ chunks: [Buffer.from(text)], count: EVENTS.length });
    const asObjects = builtPrint();
    await asObjects.output.write(EVENTS);

    expect(asLines.metrics.bytes).toBe(asLines.written().length);
    expect(asObjects.written()).toEqual(asLines.written());
    expect(asObjects.metrics).toEqual(asLines.metrics);
  });
});

describe('an http-poll job printing its answer', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status: 'ok', msg: 'café ☕' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("reports in its job-metrics the bytes that reached the run's print stream", async () => {
    const out = collector();
    const reports: RunReport[] = [];
    await runJob(printJob({ 'http-poll': { url, json: true } }), {
      worker: 'w',
      output: createPrintOutput(out.stream),
      ...fileStores(mkdtempSync(join(tmpdir(), 'sluice-print-bytes-'))),
      signal: new AbortController().signal,
      report: (r) => reports.push(r),
    });

    const metrics = reports.find((r) => r.type === 'job-metrics')?.payload;
    expect(out.written().toString()).toBe('{"status":"ok","msg":"café ☕"}\n');
    expect(metrics).toMatchObject({ output: 'print', events: 1, bytes: out.written().length });
  });
});
