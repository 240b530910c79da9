/**
 * Firestore records of identities. Users are global principals with one role per
 * tenant (`users/{username}`); everything else belongs to one tenant
 * (`tenants/{tenant}/<collection>/{id}`). `key-index/{sha256}` maps a presented key to
 * its record, so a key exchange is one read.
 */
import type { DocumentReference, Firestore, Transaction } from '@google-cloud/firestore';
import type { KeyKind } from '../../shared/auth/keys.ts';
import type { Role } from '../../shared/auth/principal.ts';

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

  tenant = (name: string) => this.db.collection('tenants').doc(name);
  user = (username: string) => this.db.collection('users').doc(username);
  apiKey = (tenant: string, id: string) => this.tenant(tenant).collection('api-keys').doc(id);
  worker = (tenant: string, id: string) => this.tenant(tenant).collection('workers').doc(id);
  enrollmentSecret = (tenant: string, id: string) =>
    this.tenant(tenant).collection('enrollment-secrets').doc(id);
  keyIndex = (hash: string) => this.db.collection('key-index').doc(hash);
  /** Browser sessions (`sessions/{id}`: username, tenant, expires_at). */
  session = (id: string) => this.db.collection('sessions').doc(id);
  sessionsOf = (username: string) => this.db.collection('sessions').where('username', '==', username);

  async getUser(username: string): Promise<UserRecord | undefined> {
    return (await this.user(username).get()).data() as UserRecord | undefined;
  }

  async tenantExists(name: string): Promise<boolean> {
    return (await this.tenant(name).get()).exists;
  }

  async lookupKey(hash: string): Promise<KeyIndexEntry | undefined> {
    return (await this.keyIndex(hash).get()).data() as KeyIndexEntry | undefined;
  }

  async list<T>(tenant: string, collection: 'api-keys' | 'workers' | 'enrollment-secrets'): Promise<T[]> {
    const snap = await this.tenant(tenant).collection(collection).orderBy('created_at').get();
    return snap.docs.map((d) => d.data() as T);
  }

  async usersOf(tenant: string): Promise<UserRecord[]> {
    const snap = await this.db.collection('users').orderBy(`memberships.${tenant}`).get();
    return snap.docs.map((d) => d.data() as UserRecord).sort((a, b) => a.username.localeCompare(b.username));
  }

  async anyUser(): Promise<boolean> {
    return !(await this.db.collection('users').limit(1).get()).empty;
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
