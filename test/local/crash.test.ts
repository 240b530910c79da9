/**
 * A crash of the local stack loses at most about a second of writes. Before, the stack
 * exported the Firestore emulator only every 30 s and on a clean stop, so a kill -9 in the
 * first 30 s lost everything, the bootstrap admin included. Started the way the README
 * says (`npm start`, here `tsx local/main.ts`), killed with SIGKILL 2 s after a write.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStackProcess } from '../helpers/stack-process.ts';

const PASSWORD = 'crash-test-password-123';

async function token(url: string): Promise<string> {
  const res = await fetch(`${url}/api/tokens/create/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

describe('the local stack after a crash', () => {
  it('keeps a write made 2 s before a SIGKILL, and the bootstrap admin', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-crash-stack-'));
    const first = await startStackProcess(dataDir, { SLUICE_ADMIN_PASSWORD: PASSWORD });
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
      await first.stop('SIGKILL');
    }

    const second = await startStackProcess(dataDir, { SLUICE_ADMIN_PASSWORD: PASSWORD });
    try {
      // The admin came back from the export: it was not created again.
      expect(second.output()).not.toContain('created the system admin');
      const global = await fetch(`${second.url}/api/contexts/global`, {
        headers: { authorization: `Bearer ${await token(second.url)}` },
      });
      expect(await global.json()).toEqual({ crash: 'survived' });
    } finally {
      await second.stop();
    }
  }, 120_000);
});
