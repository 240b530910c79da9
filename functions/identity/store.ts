/**
 * Firestore records of identities. Users are global principals with one role per
 * tenant (`users/{username}`); everything else belongs to one tenant
 * (`tenants/{tenant}/<collection>/{id}`). `key-index/{sha256}` maps a presented key to
 * its record, so a key exchange is one read.
 */
import type { DocumentReference, Firestore, Transaction } from '@google-cloud/firestore';
import { type PageRequest, pageFrom, sortByKey } from '../../shared/api/paging.ts';
import type { KeyKind } from '../../shared/auth/keys.ts';
import type { Role } from '../../shared/auth/principal.ts';
import { rootCollection, tenantCollection, tenantDoc } from '../adapters/firestore-paths.ts';

export interface UserRecord {
  username: string;
  password_hash: string;
  /** Random, set at creation: a user deleted and created again never matches old tokens. */
  generation?: string;
  /** Bumped on password change and removal from a tenant: tokens carry it and die with it. */
  credential_version: number;
  memberships: Record<string, Role>;
  system_admin: boolean;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  role: Role;
  key_hash: string;
  created_at: string;
  expires_at?: string;
}

export interface WorkerRecord {
  id: string;
  labels: Record<string, string>;
  key_hash: string;
  /** Random, set at creation: a worker deleted and created again never matches old tokens. */
  generation?: string;
  key_version: number;
  created_at: string;
  last_seen?: string;
  /** The jobs deployed to it, kept by deploy and undeploy (workers/deployed-jobs.ts); absent on older records. */
  deployed_jobs?: string[];
}

export interface EnrollmentSecretRecord {
  id: string;
  name: string;
  secret_hash: string;
  created_at: string;
  expires_at?: string;
  max_uses?: number;
  uses: number;
}

export interface KeyIndexEntry {
  kind: KeyKind;
  tenant: string;
  id: string;
}

export class IdentityStore {
  constructor(readonly db: Firestore) {}

  tenant = (name: string) => tenantDoc(this.db, name);
  user = (username: string) => rootCollection(this.db, 'users').doc(username);
  apiKey = (tenant: string, id: string) => tenantCollection(this.db, tenant, 'api-keys').doc(id);
  worker = (tenant: string, id: string) => tenantCollection(this.db, tenant, 'workers').doc(id);
  enrollmentSecret = (tenant: string, id: string) =>
    tenantCollection(this.db, tenant, 'enrollment-secrets').doc(id);
  keyIndex = (hash: string) => rootCollection(this.db, 'key-index').doc(hash);
  /** Browser sessions (`sessions/{id}`: username, tenant, expires_at). */
  session = (id: string) => rootCollection(this.db, 'sessions').doc(id);
  sessionsOf = (username: string) => rootCollection(this.db, 'sessions').where('username', '==', username);

  async getUser(username: string): Promise<UserRecord | undefined> {
    return (await this.user(username).get()).data() as UserRecord | undefined;
  }

  async tenantExists(name: string): Promise<boolean> {
    return (await this.tenant(name).get()).exists;
  }

  async lookupKey(hash: string): Promise<KeyIndexEntry | undefined> {
    return (await this.keyIndex(hash).get()).data() as KeyIndexEntry | undefined;
  }

  /** A page of records in creation order (then id, for records made in the same instant). */
  async list<T extends { created_at: string; id: string }>(
    tenant: string,
    collection: 'api-keys' | 'workers' | 'enrollment-secrets',
    request: PageRequest,
  ): Promise<{ items: T[]; next?: string }> {
    let query = tenantCollection(this.db, tenant, collection).orderBy('created_at').orderBy('id');
    if (request.after) query = query.startAfter(request.after[0], request.after[1] ?? '');
    const snap = await query.limit(request.limit + 1).get();
    return pageFrom(
      snap.docs.map((d) => d.data() as T),
      request,
      (record) => [record.created_at, record.id],
    );
  }

  async usersOf(tenant: string): Promise<UserRecord[]> {
    const snap = await rootCollection(this.db, 'users').orderBy(`memberships.${tenant}`).get();
    // In the order GET /api/users pages by (pageInMemory on [username]).
    return sortByKey(
      snap.docs.map((d) => d.data() as UserRecord),
      (u) => [u.username],
    );
  }

  async anyUser(): Promise<boolean> {
    return !(await rootCollection(this.db, 'users').limit(1).get()).empty;
  }

  /** Deletes a keyed record and its index entry in one transaction. */
  deleteKeyed(tx: Transaction, ref: DocumentReference, keyHash: string | undefined): void {
    tx.delete(ref);
    if (keyHash) tx.delete(this.keyIndex(keyHash));
  }

  /** Deletes a record that holds a key hash in `hashField`, with its index entry; false when it did not exist. */
  async removeKeyed(ref: DocumentReference, hashField: 'key_hash' | 'secret_hash'): Promise<boolean> {
    return await this.db.runTransaction(async (tx) => {
      const record = (await tx.get(ref)).data();
      if (!record) return false;
      this.deleteKeyed(tx, ref, record[hashField] as string | undefined);
      return true;
    });
  }
}
