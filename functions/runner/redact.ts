/**
 * Keeps resolved secret values out of what a running job says about itself. An error
 * from an input can quote its configuration (a URL with `?key=${secret|api/key}` in it,
 * an upstream answer echoing a header), and run reports become log lines, event payloads
 * and deployment states: every one of those passes through here first.
 *
 * @example
 *   const redact = secretRedactor({ 'api/key': 's3cr3t-value' });
 *   redact('GET https://x/?key=s3cr3t-value failed'); // 'GET https://x/?key=[secret api/key] failed'
 */

export type Redactor = <T>(value: T) => T;

export function secretRedactor(secrets: Record<string, string>): Redactor {
  // The raw value and the forms an HTTP client or a JSON body would show it in.
  const needles: [string, string][] = [];
  for (const [ref, value] of Object.entries(secrets)) {
    if (!value) continue;
    for (const form of new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]))
      needles.push([form, `[secret ${ref}]`]);
  }
  // Longest first, so a secret containing another one is replaced whole.
  needles.sort((a, b) => b[0].length - a[0].length);
  if (!needles.length) return (value) => value;
  const text = (s: string) => {
    let out = s;
    for (const [needle, label] of needles) if (out.includes(needle)) out = out.split(needle).join(label);
    return out;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), walk(v)]));
    return value;
  };
  return walk as Redactor;
}
