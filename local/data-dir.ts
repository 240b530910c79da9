/**
 * The local stack's data folder (`.sluice/`) holds its secrets: the token signing key, the
 * secrets encryption key, the TLS private key, the admin's first password, and the Firestore
 * export. The folder is made 0700 and each secret file 0600 at every start, whatever an older
 * version or a hand-made `mkdir` left, so no other local user can read them.
 *
 * The signing key lives in `signing-keys.json`, not in Firestore: the Firestore emulator
 * answers anyone on loopback without credentials.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { rootCollection } from '../functions/adapters/firestore-paths.ts';
import type { AppDeps } from '../functions/app/deps.ts';
import { newSigningKey, writeKeyFile } from '../functions/auth/signing-keys.ts';

/** Files under the data folder that only the stack's user may read. */
const SECRET_FILES = ['signing-keys.json', 'secrets.key', 'admin-password', join('tls', 'key.pem')];
const PRIVATE_FOLDERS = ['tls', 'firestore-export'];

export async function securePermissions(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing folder's mode alone.
  await chmod(dataDir, 0o700);
  for (const folder of PRIVATE_FOLDERS) {
    const path = join(dataDir, folder);
    if (existsSync(path)) await chmod(path, 0o700);
  }
  for (const file of SECRET_FILES) {
    const path = join(dataDir, file);
    if (existsSync(path)) await chmod(path, 0o600);
  }
}

/** The signing key file, created with a new key on the first start. */
export async function localSigningKeyFile(dataDir: string): Promise<string> {
  const file = join(dataDir, 'signing-keys.json');
  if (!existsSync(file)) await writeKeyFile(file, [await newSigningKey()]);
  return file;
}

/**
 * Versions before the key file kept the signing key in Firestore, where any local user could
 * read it. It is deleted rather than moved into the file: a key that was readable by everyone
 * cannot be trusted, so tokens it signed stop verifying and users sign in again.
 */
export async function dropFirestoreSigningKeys(deps: AppDeps): Promise<boolean> {
  const db = await deps.clients.firestore();
  const ref = rootCollection(db, 'system').doc('signing-keys');
  if (!(await ref.get()).exists) return false;
  await ref.delete();
  return true;
}
