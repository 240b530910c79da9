/**
 * Issue 16, item 12: an http-poll answer is read up to `max-response-size` (default
 * 16 MiB) and no further; a larger one fails the run with a job-errors event naming the
 * limit. Performed with a real server that streams more than the limit and never ends.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../functions/runner/egress/policy.ts';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { RunEvent, RunReport } from '../../functions/runner/types.ts';
import { validateJob } from '../../shared/job/validate.ts';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/small') return res.end('x'.repeat(1000));
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(64 * 1024 ** 2) });
      return res.write('x');
    }
    // 40 MiB in chunks, with no content-length: the runner finds out only by reading.
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let left = 640;
    const pump = () => {
      while (!res.destroyed && left > 0) {
        left--;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function run(path: string, extra: Record<string, unknown> = {}) {
  const parsed = validateJob(
    {
      name: 'big',
      input: { 'http-poll': { url: `${base}${path}`, timeout: '20s', ...extra } },
      output: { print: {} },
    },
    { level: 'rendered' },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const events: RunEvent[] = [];
  const reports: RunReport[] = [];
  await runJob(parsed.job, {
    worker: 'test',
    output: { write: async (batch) => void events.push(...batch), close: async () => {} },
    ...fileStores(mkdtempSync(join(tmpdir(), 'sluice-size-'))),
    signal: new AbortController().signal,
    report: (r) => reports.push(r),
    egress: new EgressPolicy(['127.0.0.0/8']),
  }).catch(() => {});
  return {
    events,
    reasons: reports.filter((r) => r.type === 'job-errors').map((r) => String(r.payload.reason)),
  };
}

describe('http-poll response size', () => {
  it('a 40 MiB answer fails the run at the default 16 MiB, naming the limit', async () => {
    const r = await run('/huge');
    expect(r.events).toEqual([]);
    expect(r.reasons).toEqual([
      expect.stringMatching(/^response too large: .* more than 16 MiB \(max-response-size: 16 MiB/),
    ]);
  });

  it('max-response-size lowers (or raises) the limit; an answer within it is read', async () => {
    const small = await run('/small', { 'max-response-size': '1KiB' });
    expect(small.events).toEqual([{ _raw: 'x'.repeat(1000) }]);
    const over = await run('/huge', { 'max-response-size': '100KiB' });
    expect(over.reasons).toEqual([expect.stringContaining('more than 100 KiB (max-response-size: 100 KiB')]);
  });

  it('a declared content-length over the limit is refused before reading', async () => {
    const r = await run('/declared', { 'max-response-size': '1MiB' });
    expect(r.reasons).toEqual([expect.stringContaining('response too large')]);
  });

  it('the limit itself is bounded when the job is saved', () => {
    const result = validateJob(
      {
        name: 'x',
        input: { 'http-poll': { url: base, 'max-response-size': '10GiB' } },
        output: { print: {} },
      },
      { level: 'saved' },
    );
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.errors).toEqual([
        { path: 'input.http-poll.max-response-size', message: 'may be at most 256 MiB' },
      ]);
  });
});
