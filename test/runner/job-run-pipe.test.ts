import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'sluice-job-run-pipe-'));
let server: Server;
const many = JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ i, pad: 'x'.repeat(40) })));

beforeAll(async () => {
  server = createServer((_req, res) => res.end(many));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(() => server.close());

describe('sluice job run | head', () => {
  it('stops quietly with exit code 0 when its reader goes away', async () => {
    const file = join(dir, 'many.yaml');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    writeFileSync(
      file,
      `name: many\ninput:\n  http-poll:\n    url: ${url}\n    json: true\n    trigger:\n      interval:\n        duration: 100ms\noutput:\n  print: {}\n`,
    );
    const child = spawn(process.execPath, ['bin/sluice.js', 'job', 'run', file, '--state-dir', dir]);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // Read the first line, then close the pipe, as `head -1` does.
    const first = await new Promise<string>((resolve) => {
      child.stdout.once('data', (d: Buffer) => {
        child.stdout.destroy();
        resolve(d.toString().split('\n')[0]!);
      });
    });
    expect(JSON.parse(first)).toMatchObject({ i: 0 });
    const code = await new Promise<number | null>((r) => child.once('close', r));
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\(node:/);
  }, 30_000);
});
