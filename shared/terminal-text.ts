/**
 * Text from other people (a request's path, a name, a label) as a terminal shows it and does
 * not obey: an escape sequence in it would retitle the window, recolour or rewrite the
 * screen, and a bidirectional override would show it in another order than it is. Control
 * characters are written as `\xNN`, bidirectional controls as `\u{NNNN}`.
 *
 * @example
 *   terminalText('a\x1b[2Jb'); // 'a\\x1b[2Jb'
 */
const UNSAFE = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

export function terminalText(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}
