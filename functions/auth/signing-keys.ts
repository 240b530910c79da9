/**
 * The control plane's token signing keys (ES256, each with a `kid`). In the local
 * stack they live in Firestore (`system/signing-keys`) and survive restarts; in the
 * cloud `SLUICE_SIGNING_KEY` (a private JWK from Secret Manager) provides the current
 * key. Rotation adds a new current key and keeps the previous public keys in the JWKS
 * until every token they signed has expired.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { AppDeps } from '../app/deps.ts';

export const ALGORITHM = 'ES256';
type SigningKey = Awaited<ReturnType<typeof importJWK>>;

export interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
  created_at: string;
}

export interface SigningKeys {
  current: { kid: string; key: SigningKey };
  /** Public keys of every key still accepted, current first. */
  jwks: { keys: JWK[] };
}

export async function newSigningKey(): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const kid = randomUUID();
  return {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALGORITHM },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALGORITHM, use: 'sig' },
    created_at: new Date().toISOString(),
  };
}

export async function loadSigningKeys(
  deps: AppDeps,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SigningKeys> {
  let keys: StoredKey[];
  if (env.SLUICE_SIGNING_KEY) {
    const privateJwk = JSON.parse(env.SLUICE_SIGNING_KEY) as JWK;
    const { d: _, ...publicJwk } = privateJwk;
    const previous = env.SLUICE_PREVIOUS_SIGNING_KEYS
      ? (JSON.parse(env.SLUICE_PREVIOUS_SIGNING_KEYS) as JWK[])
      : [];
    keys = [
      { kid: privateJwk.kid!, privateJwk, publicJwk: { ...publicJwk, use: 'sig' }, created_at: '' },
      ...previous.map((jwk) => ({ kid: jwk.kid!, privateJwk: jwk, publicJwk: jwk, created_at: '' })),
    ];
  } else {
    keys = await firestoreKeys(deps);
  }
  const current = keys[0]!;
  return {
    current: { kid: current.kid, key: await importJWK(current.privateJwk, ALGORITHM) },
    jwks: { keys: keys.map((k) => k.publicJwk) },
  };
}

/** Adds a new current key; the previous ones stay in the JWKS so their tokens verify until they expire. */
export async function rotateSigningKey(deps: AppDeps): Promise<string> {
  const db = await deps.clients.firestore();
  const fresh = await newSigningKey();
  await db.runTransaction(async (tx) => {
    const ref = db.collection('system').doc('signing-keys');
    const previous = ((await tx.get(ref)).get('keys') as StoredKey[] | undefined) ?? [];
    tx.set(ref, { keys: [fresh, ...previous].slice(0, 5) });
  });
  return fresh.kid;
}

async function firestoreKeys(deps: AppDeps): Promise<StoredKey[]> {
  const db = await deps.clients.firestore();
  const ref = db.collection('system').doc('signing-keys');
  return await db.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    const keys = snap.get('keys') as StoredKey[] | undefined;
    if (keys?.length) return keys;
    const created = [await newSigningKey()];
    tx.set(ref, { keys: created });
    return created;
  });
}
