/**
 * The local stack's self-signed certificate, kept in `.sluice/tls/` so that a
 * CLI pointed at it with `--ca-file .sluice/tls/cert.pem` keeps trusting it across restarts.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TlsMaterial {
  cert: string;
  key: string;
  certPath: string;
  /** SHA-256 fingerprint of the DER certificate, `AB:CD:...`. */
  fingerprint: string;
}

export async function loadOrCreateCertificate(dir: string): Promise<TlsMaterial> {
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  if (!existsSync(certPath) || !existsSync(keyPath) || expiresSoon(await readFile(certPath, 'utf8'))) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const notAfter = new Date(Date.now() + 365 * 24 * 3600 * 1000);
    const pems = await generate([{ name: 'commonName', value: 'sluice-local' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    await writeFile(keyPath, pems.private, { mode: 0o600 });
    await writeFile(certPath, pems.cert, { mode: 0o644 });
  }
  const cert = await readFile(certPath, 'utf8');
  const key = await readFile(keyPath, 'utf8');
  return { cert, key, certPath, fingerprint: fingerprintOf(cert) };
}

function fingerprintOf(pem: string): string {
  const der = new X509Certificate(pem).raw;
  return createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
}

function expiresSoon(pem: string): boolean {
  try {
    return Date.parse(new X509Certificate(pem).validTo) < Date.now() + 7 * 24 * 3600 * 1000;
  } catch {
    return true;
  }
}
