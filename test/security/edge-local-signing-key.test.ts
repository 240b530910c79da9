/**
 * The local stack's token signing key must not sit in the Firestore emulator, which any
 * local user can read over loopback without credentials, and its data folder must not be
 * readable by others, whatever permissions it had before the stack started.
 */
import { chmodSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newSigningKey } from '../../functions/auth/signing-keys.ts';
import { type Stack, startStack } from '../../local/stack.ts';

const projectId = 'demo-edge-signing-key';

/** What any local user sees: the emulator's REST API, no credentials. */
async function readAsAnyLocalUser(stack: Stack, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(
    `http://${stack.emulatorEnv.FIRESTORE_EMULATOR_HOST}/v1/projects/${projectId}/databases/(default)/documents/${path}`,
  );
  return { status: res.status, text: await res.text() };
}

async function login(url: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/tokens/create/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

const kidOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('the local stack signing key', () => {
  it('lives in a 0600 file under a 0700 folder, never in the Firestore emulator, across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-edge-key-'));
    // As an older version, or a `mkdir .sluice` by hand, may have left it.
    chmodSync(dataDir, 0o755);
    const password = 'edge-local-signing-key-password';
    const env = { ...process.env, SLUICE_ADMIN_PASSWORD: password };
    const start = async () =>
      await startStack({ dataDir, port: 0, http: true, env, projectId, ownEmulators: true });

    const first = await start();
    let token: string;
    try {
      token = await login(first.url, password);
      // Positive control: the emulator answers this reader, and holds the admin.
      const users = await readAsAnyLocalUser(first, 'users/admin');
      expect(users.status).toBe(200);
      const keys = await readAsAnyLocalUser(first, 'system/signing-keys');
      expect(keys.status).toBe(404);
      expect(keys.text).not.toContain('privateJwk');

      const file = join(dataDir, 'signing-keys.json');
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(file)).toBe(0o600);
      const stored = JSON.parse(readFileSync(file, 'utf8')) as {
        keys: { kid: string; privateJwk: { d?: string } }[];
      };
      expect(stored.keys[0]!.kid).toBe(kidOf(token));
      expect(stored.keys[0]!.privateJwk.d).toBeTruthy();

      // What an older version left behind: the key in Firestore, and lax permissions.
      const db = await first.deps.clients.firestore();
      await db
        .collection('system')
        .doc('signing-keys')
        .set({ keys: [await newSigningKey()] });
      chmodSync(dataDir, 0o755);
      chmodSync(file, 0o644);
    } finally {
      await first.stop();
    }

    const second = await start();
    try {
      expect((await readAsAnyLocalUser(second, 'users/admin')).status).toBe(200);
      expect((await readAsAnyLocalUser(second, 'system/signing-keys')).status).toBe(404);
      expect(second.notices.join('\n')).toContain('sign in again');
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(join(dataDir, 'signing-keys.json'))).toBe(0o600);
      // The file key survived the restart: the first run's token still verifies.
      const me = await fetch(`${second.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
      const jwks = (await (await fetch(`${second.url}/api/auth/jwks.json`)).json()) as { keys: object[] };
      expect(JSON.stringify(jwks)).not.toMatch(/"d"\s*:/);
    } finally {
      await second.stop();
    }
  }, 180_000);
});
