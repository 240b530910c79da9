/**
 * Where `sluice login` keeps its token: `$SLUICE_CONFIG_DIR/credentials.json`
 * (default `~/.config/sluice`), one entry per server URL. The file is 0600 from its first
 * byte: each write goes to a fresh file created with that mode and is renamed over the old
 * one, so a file left 0644 by an older version never holds a new token, not even briefly.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { own } from '../shared/own.ts';

export interface StoredLogin {
  token: string;
  expires_at: string;
  username: string;
  tenant: string;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SLUICE_CONFIG_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'sluice');
}

export async function readLogin(server: string, env = process.env): Promise<StoredLogin | undefined> {
  try {
    const all = JSON.parse(await readFile(join(configDir(env), 'credentials.json'), 'utf8'));
    const login = own(all as Record<string, StoredLogin>, server);
    if (!login || Date.parse(login.expires_at) <= Date.now()) return undefined;
    return login;
  } catch {
    return undefined;
  }
}

export async function writeLogin(server: string, login: StoredLogin, env = process.env): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'credentials.json');
  let all: Record<string, StoredLogin> = {};
  try {
    all = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    // First login.
  }
  // A plain object would turn a server named `__proto__` into a prototype change.
  const next = Object.assign(Object.create(null) as Record<string, StoredLogin>, all);
  next[server] = login;
  const tmp = join(dir, `.credentials.${process.pid}.${randomUUID()}.tmp`);
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(JSON.stringify(next, null, 2) + '\n');
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(tmp, file);
  await chmod(file, 0o600);
  return file;
}
