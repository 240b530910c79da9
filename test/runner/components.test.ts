import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscardOutput } from '../../functions/runner/outputs/discard/index.ts';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { RunReport } from '../../functions/runner/types.ts';
import { loadOrCreateCertificate } from '../../local/tls.ts';
import { validateJob } from '../../shared/job/validate.ts';

let server: Server;
let base: string;
const requests: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const answers: Record<string, [number, string]> = {
        '/array': [200, '[{"a":1},{"a":2},3,"x",null]'],
        '/object': [200, '{"status":"ok"}'],
        '/text': [200, 'plain words'],
        '/broken': [503, 'try later'],
      };
      const [status, text] = answers[req.url!] ?? [404, 'no'];
      res.statusCode = status;
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

/** A sink that records each write call. */
function sink() {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      writes.push(chunk.toString());
      callback();
    },
  });
  return {
    stream,
    writes,
    lines: () =>
      writes
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

async function poll(httpPoll: Record<string, unknown>) {
  const checked = validateJob(
    { name: 'p', input: { 'http-poll': httpPoll }, output: { print: {} } },
    { level: 'rendered' },
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  const out = sink();
  const reports: RunReport[] = [];
  let error: Error | undefined;
  try {
    await runJob(checked.job, {
      worker: 'w',
      output: createPrintOutput(out.stream),
      ...fileStores(mkdtempSync(join(tmpdir(), 'sluice-components-'))),
      signal: new AbortController().signal,
      report: (r) => reports.push(r),
    });
  } catch (err) {
    error = err as Error;
  }
  return { events: out.lines(), reports, error };
}

describe('the print output', () => {
  it('writes one JSON event per line, a whole batch in one write', async () => {
    const out = sink();
    const print = createPrintOutput(out.stream);
    await print.write([{ a: 1 }, { b: 'two\nlines' }, { c: [1, 2] }]);
    await print.write([]);
    expect(out.writes).toEqual(['{"a":1}\n{"b":"two\\nlines"}\n{"c":[1,2]}\n']);
  });

  it('waits for a slow consumer instead of buffering without bound', async () => {
    let release: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 16,
      write(_chunk, _encoding, callback) {
        release = callback;
      },
    });
    const print = createPrintOutput(slow);
    let done = false;
    const writing = print.write([{ long: 'x'.repeat(100) }]).then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    release!();
    await writing;
    expect(done).toBe(true);
  });

  it('releases JSON lines once the stream has written them all, not before and not on failure', async () => {
    const callbacks: ((err?: Error | null) => void)[] = [];
    const held = new Writable({
      write(_chunk, _encoding, callback) {
        callbacks.push(callback);
      },
    });
    const print = createPrintOutput(held);
    let released = 0;
    const lines = {
      chunks: [Buffer.from('{"a":1}\n'), Buffer.alloc(0)],
      count: 1,
      release: () => released++,
    };
    const writing = print.writeJsonLines!(lines);
    await new Promise((r) => setImmediate(r));
    expect(released).toBe(0);
    callbacks.shift()!();
    await writing;
    await new Promise((r) => setImmediate(r));
    expect(released).toBe(1);

    const failing = new Writable({
      write(_chunk, _encoding, callback) {
        callback(new Error('write EPIPE'));
      },
    });
    const broken = createPrintOutput(failing);
    let releasedOnFailure = 0;
    await broken.writeJsonLines!({
      chunks: [Buffer.from('x\n')],
      count: 1,
      release: () => releasedOnFailure++,
    }).catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    expect(releasedOnFailure).toBe(0);
  });

  it('rejects writes once its stream failed (the reader went away), without an unhandled error', async () => {
    const gone = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const print = createPrintOutput(gone);
    await print.write([{ a: 1 }]).catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    await expect(print.write([{ a: 2 }])).rejects.toMatchObject({ code: 'EPIPE' });
  });
});

describe('the discard output', () => {
  it('counts JSON lines and releases them at once', async () => {
    const metrics = { events: 0, bytes: 0, batches: 0, retries: 0, failures: 0 };
    let released = 0;
    await createDiscardOutput(metrics).writeJsonLines!({
      chunks: [Buffer.from('{"a":1}\n{"a":2}\n')],
      count: 2,
      release: () => released++,
    });
    expect(metrics).toMatchObject({ events: 2, bytes: 16, batches: 1 });
    expect(released).toBe(1);
  });
});

describe('the http-poll input', () => {
  it('splits a JSON array into events, wrapping non-objects in _raw', async () => {
    const { events, reports } = await poll({ url: `${base}/array`, json: true });
    expect(events).toEqual([{ a: 1 }, { a: 2 }, { _raw: 3 }, { _raw: 'x' }, { _raw: null }]);
    expect(reports.map((r) => r.type)).toEqual(['job-run-started', 'job-run-ended', 'job-metrics']);
    expect(reports[1]!.payload.events).toBe(5);
  });

  it('gives a JSON object as one event, and text (or json off) as _raw', async () => {
    expect((await poll({ url: `${base}/object`, json: true })).events).toEqual([{ status: 'ok' }]);
    expect((await poll({ url: `${base}/text`, json: true })).events).toEqual([{ _raw: 'plain words' }]);
    expect((await poll({ url: `${base}/object` })).events).toEqual([{ _raw: '{"status":"ok"}' }]);
  });

  it('sends the method, headers and body it is given', async () => {
    requests.length = 0;
    await poll({ url: `${base}/object`, method: 'POST', headers: { 'x-team': 'data' }, body: 'q=1' });
    expect(requests[0]).toMatchObject({ method: 'POST', url: '/object', body: 'q=1' });
    expect(requests[0]!.headers['x-team']).toBe('data');
  });

  it('says what made a request fail (an untrusted certificate), not just "fetch failed"', async () => {
    const tls = await loadOrCreateCertificate(mkdtempSync(join(tmpdir(), 'sluice-poll-tls-')));
    const https = createHttpsServer({ cert: tls.cert, key: tls.key }, (_req, res) => res.end('[]'));
    await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(https.address() as AddressInfo).port}/api/health`;
      const { error, reports } = await poll({ url, json: true });
      expect(error?.message).toMatch(
        /^request to https:\/\/127\.0\.0\.1:\d+\/api\/health failed: fetch failed \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN): self[- ]signed certificate/,
      );
      expect(reports.find((r) => r.type === 'job-errors')?.payload.reason).toBe(error?.message);
    } finally {
      https.close();
    }
  });

  it('shows no credentials of the URL when a request fails', async () => {
    const { error } = await poll({ url: `http://reader:hunter2@127.0.0.1:${new URL(base).port}/object` });
    expect(error?.message).toContain(`request to http://***@127.0.0.1:${new URL(base).port}/object failed: `);
    expect(error?.message).not.toContain('hunter2');
    expect(error?.message).not.toContain('reader');
  });

  it('fails a one-shot run on a non-2xx answer, saying why', async () => {
    const { events, reports, error } = await poll({ url: `${base}/broken`, json: true });
    expect(events).toEqual([]);
    expect(error?.message).toContain('503');
    expect(reports.find((r) => r.type === 'job-errors')?.payload.reason).toContain('503');
  });
});

describe('file stores (--state-dir)', () => {
  it('keep fingerprints until they expire, and watermarks across instances', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-stores-'));
    const first = fileStores(dir);
    await first.fingerprints.commit('job/a', ['k1', 'k2'], 60_000);
    await first.fingerprints.commit('job/a', ['k3'], -1);
    await first.watermarks.set('job/a', 'window-end', '2026-01-01T00:00:00.000Z');
    const second = fileStores(dir);
    expect([...(await second.fingerprints.seen('job/a', ['k1', 'k3', 'k4']))]).toEqual(['k1']);
    expect(await second.fingerprints.seen('other', ['k1'])).toEqual(new Set());
    expect(await second.watermarks.get('job/a', 'window-end')).toBe('2026-01-01T00:00:00.000Z');
    expect(await second.watermarks.get('job/a', 'nothing')).toBeUndefined();
  });

  it('lose no key when commits overlap (each a write of the whole file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-stores-'));
    const stores = fileStores(dir);
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((key) => stores.fingerprints.commit('job', [key], 60_000)));
    await Promise.all([stores.watermarks.set('job', 'a', '1'), stores.watermarks.set('job', 'b', '2')]);
    const reopened = fileStores(dir);
    expect((await reopened.fingerprints.seen('job', keys)).size).toBe(20);
    expect([await reopened.watermarks.get('job', 'a'), await reopened.watermarks.get('job', 'b')]).toEqual([
      '1',
      '2',
    ]);
  });
});
