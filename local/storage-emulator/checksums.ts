/**
 * The checksums GCS reports for every object: CRC32C (Castagnoli) and MD5, both
 * base64 of the big-endian digest, as in `x-goog-hash: crc32c=...,md5=...`.
 */
import { createHash, type Hash } from 'node:crypto';

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** Incremental checksums over a stream of chunks. */
export class ObjectHasher {
  private crc = 0xffffffff;
  private readonly md5: Hash = createHash('md5');
  size = 0;

  update(chunk: Uint8Array): void {
    let crc = this.crc;
    for (let i = 0; i < chunk.length; i++) crc = TABLE[(crc ^ chunk[i]!) & 0xff]! ^ (crc >>> 8);
    this.crc = crc;
    this.md5.update(chunk);
    this.size += chunk.length;
  }

  digest(): { crc32c: string; md5Hash: string } {
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE((this.crc ^ 0xffffffff) >>> 0);
    return { crc32c: crc.toString('base64'), md5Hash: this.md5.digest('base64') };
  }
}

export function checksumsOf(data: Uint8Array): { crc32c: string; md5Hash: string } {
  const hasher = new ObjectHasher();
  hasher.update(data);
  return hasher.digest();
}
