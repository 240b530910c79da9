/** How long a `Retry-After` header asks to wait (seconds or an HTTP date), capped; undefined without one. */
export function retryAfterMs(header: string | null, capMs: number, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(0, ms), capMs);
}
