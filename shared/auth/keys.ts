/**
 * Credentials handed out once: API keys (`slk_`), worker keys (`slw_`) and enrollment
 * secrets (`sle_`), each 32 random bytes. Only a SHA-256 hash is stored: the keys are
 * high-entropy, so a fast hash is enough (a slow password hash protects guessable secrets).
 *
 * @example
 *   const { key, hash } = newKey('api-key');
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = { 'api-key': 'slk_', worker: 'slw_', enrollment: 'sle_' } as const;
export type KeyKind = keyof typeof KEY_PREFIX;

export function newKey(kind: KeyKind): { key: string; hash: string } {
  const key = KEY_PREFIX[kind] + randomBytes(32).toString('base64url');
  return { key, hash: hashKey(key) };
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function kindOfKey(key: string): KeyKind | undefined {
  return (Object.keys(KEY_PREFIX) as KeyKind[]).find((kind) => key.startsWith(KEY_PREFIX[kind]));
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
