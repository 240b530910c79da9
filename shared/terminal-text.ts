/**
 * Text from other people (a request's path, a name, a label, a saved job file) as a terminal
 * shows it and does not obey: an escape sequence in it would retitle the window, recolour or
 * rewrite the screen, and a bidirectional override or isolate would draw it in another order
 * than it is (`Trojan Source`). Control characters are written as `\xNN`, bidirectional
 * controls as `\uNNNN`. Used by the CLI's output and the local stack's readable log.
 *
 * @example
 *   terminalLine('a\u001b[2Jb\nc'); // 'a\\x1b[2Jb\\x0ac'
 *   terminalText('no worker w\u001b[31mX\n'); // 'no worker w\\x1b[31mX\n'
 */

/** Bidirectional overrides and isolates: U+202A-202E, U+2066-2069. */
export const BIDI = '\u202a-\u202e\u2066-\u2069';
/** Everything one line escapes: every control character (line breaks too) and BIDI. */
const UNSAFE_IN_LINE = new RegExp(`[\\p{Cc}${BIDI}]`, 'gu');
/**
 * Everything multi-line text escapes: control characters but tab and line feed (a carriage
 * return only when no line feed follows it, so CRLF text stays as it is), and BIDI.
 */
const UNSAFE_IN_TEXT = new RegExp(`\\r(?!\\n)|(?![\\t\\n\\r])\\p{Cc}|[${BIDI}]`, 'gu');

/** `\x1b`, `\x9b`, `\u202e`: the character as text a terminal shows and does not obey. */
export function escapedCharacter(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : unicodeEscape(c);
}

/** `\u009b`, `\u202e`: the character's escape in JSON, YAML double quotes and JavaScript. */
export function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** One line (a table cell, a log line): every control character and BIDI escaped. */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE_IN_LINE, escapedCharacter);
}

/** Text that may span lines (messages, `job get -o yaml`): tabs and line breaks stay. Escaping twice changes nothing. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE_IN_TEXT, escapedCharacter);
}

/** Whether `terminalText` would change `text`. */
export function hasUnsafeText(text: string): boolean {
  return new RegExp(UNSAFE_IN_TEXT.source, 'u').test(text);
}
