/**
 * The start of a text a report quotes (an upstream's answer, an SDK's error), cut with a
 * mark: a secret the cut splits cannot be found whole by the redactor (redact.ts), so it
 * takes the part before CUT_MARK for what it is, the start of a secret, and hides that too.
 *
 * @example
 *   excerpt('a long answer', 6); // 'a long…'
 */

/** Ends a text that was cut. */
export const CUT_MARK = '…';

export function excerpt(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[maxChars - 1]!) ? maxChars - 1 : maxChars;
  return text.slice(0, end) + CUT_MARK;
}

/** As `excerpt`, with the cut mark counted in: at most `maxChars` characters in all (a field's limit). */
export function excerptWithin(text: string, maxChars: number): string {
  return excerpt(text, maxChars - CUT_MARK.length);
}
