/**
 * Where `sluice login` keeps its token: `$SLUICE_CONFIG_DIR/credentials.json`
 * (default `~/.config/sluice`), file mode 0600, one entry per server URL.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

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
    const login = all?.[server] as StoredLogin | undefined;
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
  all[server] = login;
  await writeFile(file, JSON.stringify(all, null, 2) + '\n', { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}
