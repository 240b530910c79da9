/**
 * Where `sluice login` keeps its token and `sluice logout` forgets it:
 * `$SLUICE_CONFIG_DIR/credentials.json` (default `~/.config/sluice`), one entry per server
 * URL. The file is 0600 from its first byte: each write goes to a fresh file created with
 * that mode and is renamed over the old one, so a file left 0644 by an older version never
 * holds a new token, not even briefly.
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

/** The login kept for `server` and still valid, if any. */
export async function readLogin(server: string, env = process.env): Promise<StoredLogin | undefined> {
  const stored = await readStoredLogin(server, env);
  return stored && !stored.expired ? stored.login : undefined;
}

/**
 * The login kept for `server`: a valid one if there is one, else an expired one (so that
 * commands can say when it expired and `logout` can forget it).
 */
export async function readStoredLogin(
  server: string,
  env = process.env,
): Promise<{ login: StoredLogin; expired: boolean } | undefined> {
  const all = await readAll(env);
  if (!all) return undefined;
  const key = normalizeServer(server);
  // The normal key first, then the exact string (older versions), then any other spelling.
  const candidates = [
    own(all, key),
    own(all, server),
    ...Object.keys(all)
      .filter((stored) => stored !== key && stored !== server && normalizeServer(stored) === key)
      .map((stored) => own(all, stored)),
  ].filter((login): login is StoredLogin => typeof login?.token === 'string');
  const valid = candidates.find((login) => Date.parse(login.expires_at) > Date.now());
  if (valid) return { login: valid, expired: false };
  return candidates[0] ? { login: candidates[0], expired: true } : undefined;
}

/**
 * Forgets the login kept for `server` (under every spelling of it); the other servers'
 * logins stay. Returns what was forgotten, as `readStoredLogin` saw it, or undefined when
 * there was nothing to forget.
 */
export async function removeLogin(
  server: string,
  env = process.env,
): Promise<{ login: StoredLogin; expired: boolean; file: string } | undefined> {
  const stored = await readStoredLogin(server, env);
  const all = await readAll(env);
  if (!stored || !all) return undefined;
  const key = normalizeServer(server);
  const rest = Object.assign(Object.create(null) as Record<string, StoredLogin>, all);
  for (const name of Object.keys(rest))
    if (name === server || normalizeServer(name) === key) delete rest[name];
  return { ...stored, file: await writeAll(rest, env) };
}

async function readAll(env: NodeJS.ProcessEnv): Promise<Record<string, StoredLogin> | undefined> {
  let all: unknown;
  try {
    all = JSON.parse(await readFile(join(configDir(env), 'credentials.json'), 'utf8'));
  } catch {
    return undefined;
  }
  return typeof all === 'object' && all !== null ? (all as Record<string, StoredLogin>) : undefined;
}

export async function writeLogin(server: string, login: StoredLogin, env = process.env): Promise<string> {
  // A plain object would turn a server named `__proto__` into a prototype change.
  const next = Object.assign(Object.create(null) as Record<string, StoredLogin>, await readAll(env));
  const key = normalizeServer(server);
  // Other spellings of this server (stored by older versions) would only hold a stale token.
  for (const stored of Object.keys(next)) if (normalizeServer(stored) === key) delete next[stored];
  next[key] = login;
  return await writeAll(next, env);
}

/** Writes credentials.json whole, 0600 from its first byte (see the top of this file). */
async function writeAll(all: Record<string, StoredLogin>, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'credentials.json');
  const tmp = join(dir, `.credentials.${process.pid}.${randomUUID()}.tmp`);
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(JSON.stringify(all, null, 2) + '\n');
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
