/**
 * Credential references: what a token's `cred` claim names, so that revoking the
 * credential revokes the token. A reference carries the record's random `generation`
 * (set when the user or worker is created) and its version (bumped on password change,
 * removal from a tenant, key rotation): versions restart at 1 when a user or worker is
 * deleted and created again under the same name, the generation does not repeat, so old
 * tokens stay dead.
 *
 *   user:<username>:<generation>.<version>
 *   session:<username>:<generation>.<version>:<session id>
 *   worker:<tenant>:<id>:<generation>.<key version>
 *   api-key:<tenant>:<id>            (ids are random: a new key never reuses one)
 */
import { randomBytes } from 'node:crypto';
import type { UserRecord, WorkerRecord } from './store.ts';

/** Records written before generations existed share this one; their old tokens die once. */
const LEGACY_GENERATION = 'g0';

export function newGeneration(): string {
  return randomBytes(12).toString('hex');
}

export function userStamp(user: Pick<UserRecord, 'generation' | 'credential_version'>): string {
  return `${user.generation ?? LEGACY_GENERATION}.${user.credential_version}`;
}

export function workerStamp(worker: Pick<WorkerRecord, 'generation' | 'key_version'>): string {
  return `${worker.generation ?? LEGACY_GENERATION}.${worker.key_version}`;
}

export function userCredentialRef(user: UserRecord): string {
  return `user:${user.username}:${userStamp(user)}`;
}

export function sessionCredentialRef(userRef: string, sessionId: string): string {
  const [, username, stamp] = userRef.split(':');
  return `session:${username}:${stamp}:${sessionId}`;
}

export function workerCredentialRef(tenant: string, worker: WorkerRecord): string {
  return `worker:${tenant}:${worker.id}:${workerStamp(worker)}`;
}

/** The session id of a `session:` reference. */
export function sessionIdOf(ref: string): string | undefined {
  const parts = ref.split(':');
  return parts[0] === 'session' && parts.length === 4 ? parts[3] : undefined;
}
