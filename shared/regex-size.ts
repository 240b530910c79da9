/**
 * How large a regular expression's program is once its counted repetitions are expanded,
 * estimated from the pattern's text without compiling it. re2js expands `x{n,m}` into m
 * copies of x when it compiles, and each step of the program costs it about 1.6 KB of heap
 * and 5 µs: a 22-character `(a{0,999}){0,999}` is a million steps (a gigabyte, seconds of
 * a blocked event loop) and still under re2js's own limit. RE2 itself bounds this with
 * `max_mem`; re2js has no such setting, so regex.ts refuses what this counts as too large
 * before re2js sees it.
 *
 * The count follows RE2's (re2js `Parser.calcSize`): a literal character is 1, `x*` is
 * 2 + x, `x+` and `x?` 1 + x, `x{n,m}` is m·x + (m - n), `x{n,}` 1 + n·x, a capturing
 * group 2 + its content, alternatives their sum and one more for each `|`. Syntax errors are left to re2js: this only needs to
 * count at least what re2js will build.
 *
 * @example
 *   regexSize('logs/\\d{4}/'); // 10
 *   regexSize('(a{0,999}){0,999}'); // about a million
 */

/** One group being read: its finished alternatives, the current one, and its last atom. */
interface Frame {
  /** A capturing group costs 2 more; `(?:...)` nothing. */
  capture: boolean;
  alternatives: number[];
  current: number;
  last: number;
}

const REPEAT = /^\{(\d{1,9})(,(\d{0,9}))?\}/;

export function regexSize(pattern: string): number {
  const stack: Frame[] = [];
  let frame: Frame = { capture: false, alternatives: [], current: 0, last: 0 };
  const atom = (size: number) => {
    frame.current += size;
    frame.last = size;
  };
  /** Replaces the last atom by its repetition, `size(sub)` being what it becomes. */
  const repeat = (size: (sub: number) => number) => {
    const grown = size(frame.last);
    frame.current += grown - frame.last;
    frame.last = grown;
  };
  /** The previous token was a repetition: a `?` after it makes it lazy, the same size. */
  let afterRepeat = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const lazy = afterRepeat && c === '?';
    afterRepeat = false;
    if (lazy) continue;
    if (c === '\\') {
      i = escapeEnd(pattern, i, atom);
    } else if (c === '[') {
      i = classEnd(pattern, i);
      atom(1);
    } else if (c === '(') {
      // `(?i)` and the like set flags: no group.
      const flags = /^\(\?[a-zA-Z-]*\)/.exec(pattern.slice(i, i + 16));
      if (flags) {
        i += flags[0].length - 1;
        continue;
      }
      stack.push(frame);
      // The group's opening: `(?:`, `(?i:`, `(?P<name>`, `(?<name>` or `(`.
      const opening = /^\((?:\?[a-zA-Z-]*:|\?P?<[^>]*>)?/.exec(pattern.slice(i, i + 300))![0];
      frame = { capture: !opening.endsWith(':'), alternatives: [], current: 0, last: 0 };
      i += opening.length - 1;
    } else if (c === ')') {
      const size = (frame.capture ? 2 : 0) + alternation(frame);
      frame = stack.pop() ?? { capture: false, alternatives: [], current: 0, last: 0 };
      atom(size);
    } else if (c === '|') {
      frame.alternatives.push(frame.current);
      frame.current = 0;
      frame.last = 0;
    } else if (c === '*') {
      repeat((sub) => 2 + sub);
      afterRepeat = true;
    } else if (c === '+' || c === '?') {
      repeat((sub) => 1 + sub);
      afterRepeat = true;
    } else if (c === '{') {
      const counted = REPEAT.exec(pattern.slice(i, i + 24));
      if (!counted) {
        atom(1);
        continue;
      }
      const min = Number(counted[1]);
      const max = counted[2] === undefined ? min : counted[3] === '' ? -1 : Number(counted[3]);
      repeat((sub) =>
        max === -1 ? (min === 0 ? 2 + sub : 1 + min * sub) : max * sub + Math.max(0, max - min),
      );
      i += counted[0].length - 1;
      afterRepeat = true;
    } else {
      atom(1);
    }
  }
  while (stack.length) {
    const size = (frame.capture ? 2 : 0) + alternation(frame);
    frame = stack.pop()!;
    atom(size);
  }
  return Math.max(1, alternation(frame));
}

function alternation(frame: Frame): number {
  const all = [...frame.alternatives, frame.current];
  return all.reduce((sum, size) => sum + size, 0) + all.length - 1;
}

/** Where the escape at `i` ends (`\Q...\E` counts each character it quotes). */
function escapeEnd(pattern: string, i: number, atom: (size: number) => void): number {
  const next = pattern[i + 1];
  if (next === 'Q') {
    const end = pattern.indexOf('\\E', i + 2);
    const quoted = end === -1 ? pattern.length - (i + 2) : end - (i + 2);
    for (let k = 0; k < quoted; k++) atom(1);
    return end === -1 ? pattern.length : end + 1;
  }
  atom(1);
  if ((next === 'p' || next === 'P' || next === 'x') && pattern[i + 2] === '{') {
    const close = pattern.indexOf('}', i + 3);
    return close === -1 ? pattern.length : close;
  }
  return i + 1;
}

/** Where the character class opened at `i` ends (its `]`). */
function classEnd(pattern: string, i: number): number {
  let k = i + 1;
  if (pattern[k] === '^') k++;
  // A `]` first in the class is a character of it.
  if (pattern[k] === ']') k++;
  for (; k < pattern.length; k++) {
    const c = pattern[k];
    if (c === '\\') k++;
    else if (c === '[' && pattern[k + 1] === ':') {
      const close = pattern.indexOf(':]', k + 2);
      if (close !== -1) k = close + 1;
    } else if (c === ']') return k;
  }
  return pattern.length;
}
