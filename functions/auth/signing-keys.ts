/**
 * The control plane's token signing keys (ES256, each with a `kid`), from one of three places:
 *   - the cloud: `SLUICE_SIGNING_KEY` (a private JWK from Secret Manager) is the current key and
 *     `SLUICE_PREVIOUS_SIGNING_KEYS` lists keys whose tokens must still verify;
 *   - the local stack: a 0600 file (`config.signingKeyFile`, `.sluice/signing-keys.json`), never
 *     Firestore, whose emulator any local user can read over loopback without credentials;
 *   - in-process test apps: Firestore (`system/signing-keys`) of the test's own project.
 * Rotation adds a new current key and keeps the previous ones in the JWKS until every token
 * they signed has expired. The JWKS carries only public members, whatever the source holds.
 */
import { randomUUID } from 'node:crypto';
import { chmod, open, readFile, rename } from 'node:fs/promises';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { rootCollection } from '../adapters/firestore-paths.ts';
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

/** The key material that may be published per key type; everything else (`d`, `p`, `q`, `k`, ...) is private or unknown. */
const PUBLIC_KEY_MEMBERS: Record<string, readonly string[]> = {
  EC: ['kty', 'crv', 'x', 'y'],
  RSA: ['kty', 'n', 'e'],
  OKP: ['kty', 'crv', 'x'],
};

/**
 * The public half of a JWK, built from an allow-list so that whatever an operator pasted
 * (a whole private JWK, a symmetric key) never reaches `GET /api/auth/jwks.json`.
 */
export function publicJwkOf(jwk: JWK): JWK {
  const members = jwk.kty ? PUBLIC_KEY_MEMBERS[jwk.kty] : undefined;
  if (!members || !Object.hasOwn(PUBLIC_KEY_MEMBERS, jwk.kty!)) {
    throw new Error(
      `signing key ${jwk.kid ?? '(no kid)'} has key type "${jwk.kty}", which has no public form`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const member of members)
    if (Object.hasOwn(jwk, member)) out[member] = (jwk as Record<string, unknown>)[member];
  if (jwk.kid !== undefined) out.kid = jwk.kid;
  if (jwk.alg !== undefined) out.alg = jwk.alg;
  out.use = 'sig';
  return out as JWK;
}

export async function newSigningKey(): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const kid = randomUUID();
  return {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALGORITHM },
    publicJwk: publicJwkOf({ ...(await exportJWK(publicKey)), kid, alg: ALGORITHM }),
    created_at: new Date().toISOString(),
  };
}

export async function loadSigningKeys(
  deps: AppDeps,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SigningKeys> {
  let keys: StoredKey[];
  if (env.SLUICE_SIGNING_KEY) keys = configuredKeys(env);
  else if (deps.config.signingKeyFile) keys = await readKeyFile(deps.config.signingKeyFile);
  else if (env.K_SERVICE)
    // A Cloud Function (K_SERVICE names it) without its secret: a key made in Firestore
    // would be readable by every identity that reads Firestore, the runners' included.
    throw new Error(
      `SLUICE_SIGNING_KEY is not set for ${env.K_SERVICE}: terraform mounts it from Secret Manager (terraform/secrets.tf); refusing to make a signing key in Firestore`,
    );
  else keys = await firestoreKeys(deps);
  const current = keys[0]!;
  return {
    current: { kid: current.kid, key: await importJWK(current.privateJwk, ALGORITHM) },
    // Derived here rather than trusted from storage, so an old or hand-edited record cannot leak.
    jwks: { keys: keys.map((k) => publicJwkOf(k.publicJwk)) },
  };
}

function configuredKeys(env: NodeJS.ProcessEnv): StoredKey[] {
  const privateJwk = JSON.parse(env.SLUICE_SIGNING_KEY!) as JWK;
  const previous = env.SLUICE_PREVIOUS_SIGNING_KEYS
    ? (JSON.parse(env.SLUICE_PREVIOUS_SIGNING_KEYS) as JWK[])
    : [];
  return [privateJwk, ...previous].map((jwk) => ({
    kid: jwk.kid!,
    privateJwk: jwk,
    publicJwk: publicJwkOf(jwk),
    created_at: '',
  }));
}

/** Adds a new current key; the previous ones stay in the JWKS so their tokens verify until they expire. */
export async function rotateSigningKey(deps: AppDeps): Promise<string> {
  const fresh = await newSigningKey();
  const file = deps.config.signingKeyFile;
  if (file) {
    await writeKeyFile(file, [fresh, ...(await readKeyFile(file))].slice(0, 5));
    return fresh.kid;
  }
  const db = await deps.clients.firestore();
  await db.runTransaction(async (tx) => {
    const ref = rootCollection(db, 'system').doc('signing-keys');
    const previous = ((await tx.get(ref)).get('keys') as StoredKey[] | undefined) ?? [];
    tx.set(ref, { keys: [fresh, ...previous].slice(0, 5) });
  });
  return fresh.kid;
}

/** The local stack's key file: `{ "keys": [current, ...previous] }`. */
export async function readKeyFile(file: string): Promise<StoredKey[]> {
  const keys = (JSON.parse(await readFile(file, 'utf8')) as { keys?: StoredKey[] }).keys;
  if (!keys?.length) throw new Error(`${file} holds no signing key`);
  return keys;
}

/**
 * Writes the key file as 0600 from its first byte (a new file opened with that mode, then
 * renamed over the old one), so there is no moment at which another user could read it.
 */
export async function writeKeyFile(file: string, keys: StoredKey[]): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify({ keys }, null, 2)}\n`);
    // The umask cannot widen 0600, but an inherited ACL or odd umask should not matter either.
    await handle.chmod(0o600);
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  await chmod(file, 0o600);
}

async function firestoreKeys(deps: AppDeps): Promise<StoredKey[]> {
  const db = await deps.clients.firestore();
  const ref = rootCollection(db, 'system').doc('signing-keys');
  return await db.runTransaction(async (tx) => {
    const snap = await tx.get(ref);
    const keys = snap.get('keys') as StoredKey[] | undefined;
    if (keys?.length) return keys;
    const created = [await newSigningKey()];
    tx.set(ref, { keys: created });
    return created;
  });
}
