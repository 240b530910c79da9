/**
 * The NDJSON the `gcs` benchmarks read: log-like lines of about 200 bytes, and 40 gzip
 * objects of 5 MB raw made of them (bench:gcs, bench:gcs:cores).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const ndjsonLine = (i: number) =>
  `{"ts":"2026-03-01T12:00:${String(i % 60).padStart(2, '0')}.000Z","level":"info","service":"api-${i % 7}","request_id":"${(i * 2654435761).toString(16)}","status":${200 + (i % 5)},"latency_ms":${i % 997},"path":"/v1/items/${i}","message":"handled request number ${i}"}\n`;

/** `count` gzip NDJSON objects of `rawBytes` each in `folder`; returns their paths. */
export function generateNdjson(folder: string, count = 40, rawBytes = 5_000_000): string[] {
  mkdirSync(folder, { recursive: true });
  const files: string[] = [];
  let i = 0;
  for (let f = 0; f < count; f++) {
    const parts: string[] = [];
    let size = 0;
    while (size < rawBytes) {
      const l = ndjsonLine(i++);
      parts.push(l);
      size += l.length;
    }
    const path = join(folder, `part-${String(f).padStart(2, '0')}.json.gz`);
    writeFileSync(path, gzipSync(parts.join(''), { level: 6 }));
    files.push(path);
  }
  return files;
}
