/**
 * Keeps resolved secret values out of what a running job says about itself. An error
 * from an input can quote its configuration (a URL with `?key=${secret|api/key}` in it,
 * an upstream answer echoing a header), and run reports become log lines, event payloads
 * and deployment states: every one of those passes through here first. A quoted text that
 * was cut (excerpt.ts) may end in the first part of a secret: that part is hidden as well.
 *
 * @example
 *   const redact = secretRedactor({ 'api/key': 's3cr3t-value' });
 *   redact('GET https://x/?key=s3cr3t-value failed'); // 'GET https://x/?key=[secret api/key] failed'
 */

import { CUT_MARK } from './excerpt.ts';
import { secretForms } from './secret-forms.ts';

export type Redactor = <T>(value: T) => T;

export function secretRedactor(secrets: Record<string, string>): Redactor {
  // The raw value and the forms an HTTP client, a JSON body or an echo would show it in.
  const needles: [string, string][] = [];
  for (const [ref, value] of Object.entries(secrets)) {
    if (!value) continue;
    for (const form of secretForms(value)) needles.push([form, `[secret ${ref}]`]);
  }
  // Longest first, so a secret containing another one is replaced whole.
  needles.sort((a, b) => b[0].length - a[0].length);
  if (!needles.length) return (value) => value;
  const text = (s: string) => {
    let out = s;
    for (const [needle, label] of needles) if (out.includes(needle)) out = out.split(needle).join(label);
    return out.includes(CUT_MARK) ? withoutCutSecrets(out, needles) : out;
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

/**
 * Before each cut mark, the longest start of a secret (of at least MIN_CUT_PART characters:
 * fewer tell nothing, and would hide ordinary text) becomes its label.
 */
const MIN_CUT_PART = 4;

function withoutCutSecrets(text: string, needles: [string, string][]): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf(CUT_MARK); at >= 0; at = text.indexOf(CUT_MARK, at + 1)) {
    let cut = 0;
    let label = '';
    for (const [needle, name] of needles) {
      const length = longestStartBefore(text, from, at, needle);
      if (length > cut) [cut, label] = [length, name];
    }
    out += text.slice(from, at - cut) + label;
    from = at;
  }
  return out + text.slice(from);
}

/** The length of the longest start of `needle` (not all of it) that `text[from, at)` ends with. */
function longestStartBefore(text: string, from: number, at: number, needle: string): number {
  const last = text.charCodeAt(at - 1);
  for (let length = Math.min(needle.length - 1, at - from); length >= MIN_CUT_PART; length--)
    if (needle.charCodeAt(length - 1) === last && text.startsWith(needle.slice(0, length), at - length))
      return length;
  return 0;
}
