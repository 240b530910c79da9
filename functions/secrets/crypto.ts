/**
 * Secrets at rest: AES-256-GCM with a 32-byte key from configuration (Secret Manager in
 * the cloud, `.sluice/secrets.key` locally) that the API never returns. The tenant, scope
 * and name are bound in as associated data, so a ciphertext copied to another secret fails.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SealedValue {
  iv: string;
  ciphertext: string;
  tag: string;
}

export function seal(plaintext: string, keyBase64: string, context: string): SealedValue {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(keyBase64), iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

export function open(sealed: SealedValue, keyBase64: string, context: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key(keyBase64), Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([
    decipher.update(Buffer.from(sealed.ciphertext, 'base64')),
    decipher.final(),
  ]).toString('utf8');
}

function key(keyBase64: string): Buffer {
  const bytes = Buffer.from(keyBase64, 'base64');
  if (bytes.length !== 32) throw new Error('SLUICE_SECRETS_KEY must be 32 bytes, base64-encoded');
  return bytes;
}
