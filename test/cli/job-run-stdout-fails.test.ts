/**
 * `sluice job run` writing its events to a standard output that fails: a full disk
 * (`> /dev/full`) is a failed run, said and exit 1, not a quiet success with the events lost;
 * a reader that went away (`| head -1`) is still a quiet stop.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'sluice-run-stdout-'));
let server: Server;
let file: string;

beforeAll(async () => {
  const events = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ i, pad: 'x'.repeat(100) })));
  server = createServer((_req, res) => res.end(events));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  file = join(dir, 'job.yaml');
  writeFileSync(
    file,
    `name: to-stdout\ninput:\n  http-poll:\n    url: ${url}\n    json: true\noutput:\n  print: {}\n`,
  );
});
afterAll(() => new Promise((r) => server.close(r)));

/** The real executable, its standard output `stdout` (a file descriptor or 'pipe'). */
function jobRun(stdout: number | 'pipe', state: string) {
  const child = spawn(
    process.execPath,
    [join(root, 'bin/sluice.js'), 'job', 'run', file, '--state-dir', join(dir, state)],
    {
      cwd: root,
      stdio: ['ignore', stdout, 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d;
  });
  return {
    child,
    done: new Promise<{ code: number | null; stderr: string }>((r) =>
      child.on('close', (code) => r({ code, stderr })),
    ),
  };
}

describe('sluice job run: a standard output that fails', () => {
  it('on a full disk, the run fails, saying it could not write its output', async () => {
    const full = openSync('/dev/full', 'w');
    const { done } = jobRun(full, 'full');
    closeSync(full);
    const { code, stderr } = await done;
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(/ENOSPC/);
    expect(stderr).toMatch(/job-errors \{"output":"print"/);
    expect(stderr).toMatch(/"failed":true/);
  });

  it('when its reader goes away, the run stops quietly', async () => {
    const { child, done } = jobRun('pipe', 'gone');
    child.stdout!.once('data', () => child.stdout!.destroy());
    const { code, stderr } = await done;
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/job-errors|failed:/);
  });
});
