/**
 * A crash of the local stack loses at most about a second of writes. Before, the stack
 * exported the Firestore emulator only every 30 s and on a clean stop, so a kill -9 in the
 * first 30 s lost everything, the bootstrap admin included. Started the way the README
 * says (`npm start`, here `tsx local/main.ts`), killed with SIGKILL 2 s after a write.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../local/processes.ts';

const PASSWORD = 'crash-test-password-123';

/** Starts the stack in its own process; resolves with its URL once it prints `sluice ready`. */
async function startStack(
  dataDir: string,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SLUICE_PORT: String(await freePort()),
    SLUICE_HTTP: '1',
    SLUICE_ADMIN_PASSWORD: PASSWORD,
  };
  // Its own emulators, as `npm start` has: not the test run's shared ones.
  delete env.FIRESTORE_EMULATOR_HOST;
  delete env.PUBSUB_EMULATOR_HOST;
  delete env.STORAGE_EMULATOR_HOST;
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--data-dir', dataDir], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    out += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const ready = /sluice ready: (http:\/\/\S+)/.exec(out);
      if (ready) resolve(ready[1]!);
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`the stack exited with ${code}:\n${out}`)));
  });
  return { child, url, output: () => out };
}

async function token(url: string): Promise<string> {
  const res = await fetch(`${url}/api/tokens/create/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));

describe('the local stack after a crash', () => {
  it('keeps a write made 2 s before a SIGKILL, and the bootstrap admin', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-crash-stack-'));
    const first = await startStack(dataDir);
    try {
      expect(first.output()).toContain('created the system admin `admin`');
      const saved = await fetch(`${first.url}/api/contexts/update-global`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token(first.url)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ crash: 'survived' }),
      });
      expect(saved.status).toBe(200);
      await new Promise((r) => setTimeout(r, 2_000));
    } finally {
      first.child.kill('SIGKILL');
      await exited(first.child);
    }

    const second = await startStack(dataDir);
    try {
      // The admin came back from the export: it was not created again.
      expect(second.output()).not.toContain('created the system admin');
      const global = await fetch(`${second.url}/api/contexts/global`, {
        headers: { authorization: `Bearer ${await token(second.url)}` },
      });
      expect(await global.json()).toEqual({ crash: 'survived' });
    } finally {
      second.child.kill('SIGINT');
      await exited(second.child);
    }
  }, 120_000);
});
