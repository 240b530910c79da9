/**
 * First start: with no users stored, creates tenant `default` and the system admin
 * `admin`, with the given password or a generated one (returned once, never logged).
 */
import { randomBytes } from 'node:crypto';
import { BOOTSTRAP_ADMIN, DEFAULT_TENANT } from '../../shared/auth/names.ts';
import { rootCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import { authServices } from '../auth/services.ts';
import { newGeneration } from './credential-refs.ts';
import type { UserRecord } from './store.ts';

export async function bootstrapAdmin(
  deps: AppDeps,
  options: { password?: string | undefined } = {},
): Promise<{ created: boolean; password?: string }> {
  const store = await authServices(deps).store();
  if (await store.anyUser()) return { created: false };
  const password = options.password ?? randomBytes(18).toString('base64url');
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new Error(`SLUICE_ADMIN_PASSWORD needs at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const record: UserRecord = {
    username: BOOTSTRAP_ADMIN,
    password_hash: await hashPassword(password),
    generation: newGeneration(),
    credential_version: 1,
    memberships: { [DEFAULT_TENANT]: 'admin' },
    system_admin: true,
    created_at: new Date().toISOString(),
  };
  const created = await store.db.runTransaction(async (tx) => {
    if (!(await tx.get(rootCollection(store.db, 'users').limit(1))).empty) return false;
    tx.set(
      store.tenant(DEFAULT_TENANT),
      { name: DEFAULT_TENANT, created_at: record.created_at },
      { merge: true },
    );
    tx.create(store.user(BOOTSTRAP_ADMIN), record);
    return true;
  });
  return created ? { created: true, ...(options.password ? {} : { password }) } : { created: false };
}
