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

/**
 * The key a server's login is stored under: scheme and host in lower case, the scheme's
 * default port dropped, no trailing slash. A string that is no URL is kept as it is.
 */
export function normalizeServer(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return server;
  }
  // `host` is already lower case and without the default port; the path keeps its case.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

export async function readLogin(server: string, env = process.env): Promise<StoredLogin | undefined> {
  let all: Record<string, StoredLogin>;
  try {
    all = JSON.parse(await readFile(join(configDir(env), 'credentials.json'), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof all !== 'object' || all === null) return undefined;
  const key = normalizeServer(server);
  // The normal key first, then the exact string (older versions), then any other spelling.
  const candidates = [
    own(all, key),
    own(all, server),
    ...Object.keys(all)
      .filter((stored) => stored !== key && stored !== server && normalizeServer(stored) === key)
      .map((stored) => own(all, stored)),
  ];
  return candidates.find(
    (login): login is StoredLogin =>
      typeof login?.token === 'string' && Date.parse(login.expires_at) > Date.now(),
  );
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
  const key = normalizeServer(server);
  // Other spellings of this server (stored by older versions) would only hold a stale token.
  for (const stored of Object.keys(next)) if (normalizeServer(stored) === key) delete next[stored];
  next[key] = login;
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
