/**
 * The NDJSON lines `npm run bench:outputs` reads and writes: the same shape as
 * bench:gcs's (about 230 bytes each), deterministic, so the plain publisher it is
 * compared with sends the very same messages.
 */
export function benchLine(i: number): string {
  return `{"ts":"2026-03-01T12:00:${String(i % 60).padStart(2, '0')}.000Z","level":"info","service":"api-${i % 7}","request_id":"${(i * 2654435761).toString(16)}","status":${200 + (i % 5)},"latency_ms":${i % 997},"path":"/v1/items/${i}","message":"handled request number ${i}"}\n`;
}
