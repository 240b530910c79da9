/** Encrypted secrets in Firestore: `tenants/{tenant}/secrets/{scope}~{name}`. */
import type { Firestore, Transaction } from '@google-cloud/firestore';
import { sortByKey } from '../../shared/api/paging.ts';
import { ApiError } from '../../shared/errors.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import { open, type SealedValue, seal } from './crypto.ts';

interface StoredSecret extends SealedValue {
  scope: string;
  name: string;
  updated_at: string;
}

/** A secret's place in the list and in its pages (secrets/routes.ts pages by the same key). */
const secretKey = (secret: { scope: string; name: string }): string[] => [secret.scope, secret.name];

export class SecretStore {
  constructor(
    private readonly db: Firestore,
    private readonly keyBase64: string | undefined,
  ) {}

  private collection(tenant: string) {
    return tenantCollection(this.db, tenant, 'secrets');
  }

  private key(): string {
    if (!this.keyBase64) throw ApiError.unavailable('secrets are not configured: set SLUICE_SECRETS_KEY');
    return this.keyBase64;
  }

  async put(tenant: string, scope: string, name: string, value: string): Promise<void> {
    await this.db.runTransaction(async (tx) => this.putIn(tx, tenant, scope, name, value));
  }

  /** Stores the value in `tx`. */
  putIn(tx: Transaction, tenant: string, scope: string, name: string, value: string): void {
    const sealed = seal(value, this.key(), `${tenant}/${scope}/${name}`);
    tx.set(this.collection(tenant).doc(`${scope}~${name}`), {
      scope,
      name,
      ...sealed,
      updated_at: new Date().toISOString(),
    });
  }

  /** Every secret of the tenant, by scope then name (the order its pages follow). */
  async list(tenant: string): Promise<{ scope: string; name: string; updated_at: string }[]> {
    const snap = await this.collection(tenant).orderBy('scope').get();
    // In the order GET /api/secrets pages by (pageInMemory on [scope, name]).
    return sortByKey(
      snap.docs
        .map((d) => d.data() as StoredSecret)
        .map(({ scope, name, updated_at }) => ({ scope, name, updated_at })),
      secretKey,
    );
  }

  async delete(tenant: string, scope: string, name: string): Promise<boolean> {
    return await this.db.runTransaction(async (tx) => this.deleteIn(tx, tenant, scope, name));
  }

  /** Deletes it in `tx` (reads first); false when there was none. */
  async deleteIn(tx: Transaction, tenant: string, scope: string, name: string): Promise<boolean> {
    const ref = this.collection(tenant).doc(`${scope}~${name}`);
    if (!(await tx.get(ref)).exists) return false;
    tx.delete(ref);
    return true;
  }

  /** Which of `refs` (`scope/name`) exist. */
  async existing(tenant: string, refs: string[], tx?: Transaction): Promise<Set<string>> {
    if (!refs.length) return new Set();
    const docs = refs.map((ref) => this.collection(tenant).doc(ref.replace('/', '~')));
    const snaps = tx ? await tx.getAll(...docs) : await this.db.getAll(...docs);
    return new Set(refs.filter((_, i) => snaps[i]!.exists));
  }

  /** Decrypted values of `refs`; only for the worker that runs a job using them. */
  async reveal(tenant: string, refs: string[]): Promise<Record<string, string>> {
    if (!refs.length) return {};
    const snaps = await this.db.getAll(
      ...refs.map((ref) => this.collection(tenant).doc(ref.replace('/', '~'))),
    );
    const values: Record<string, string> = {};
    snaps.forEach((snap, i) => {
      const stored = snap.data() as StoredSecret | undefined;
      if (stored) values[refs[i]!] = open(stored, this.key(), `${tenant}/${stored.scope}/${stored.name}`);
    });
    return values;
  }
}
