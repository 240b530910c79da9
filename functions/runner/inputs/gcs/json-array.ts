/**
 * Streams the elements of top-level JSON arrays (a file holding `[ {...}, {...} ]`,
 * pretty-printed or not, or several arrays one after another) as separate texts, so a
 * large array becomes one event per element without parsing, or holding, the whole
 * file. Top-level values that are not arrays pass through whole. Each element is at
 * most `maxChars` long and nests at most `maxDepth` levels; a longer or deeper one is
 * reported and skipped (never held whole), and the elements after it are still read.
 * `nestsDeeperThan` measures the nesting of one text the same way.
 *
 * @example
 *   for await (const { texts, numbers } of splitJsonArrays(text, { maxChars, maxDepth, onTooLong, onTooDeep }))
 *     texts.map((t, k) => handle(JSON.parse(t), numbers[k]));
 */

export interface ArrayElements {
  texts: string[];
  /** The 1-based number of each text's element, counted over the content. */
  numbers: number[];
}

export async function* splitJsonArrays(
  text: AsyncIterable<string>,
  options: {
    maxChars: number;
    maxDepth: number;
    onTooLong(element: number, length: number): void;
    onTooDeep(element: number): void;
  },
): AsyncGenerator<ArrayElements> {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let arrayTop = false; // inside a top-level array: elements are at depth 1
  let current = '';
  let collecting = false;
  /** Why the element being read is skipped: `long` (counted on), `deep`, or not (`undefined`). */
  let skipping: 'long' | 'deep' | undefined;
  let skippedLength = 0;
  let count = 0;
  const emit = (out: ArrayElements) => {
    count++;
    if (skipping === 'long') options.onTooLong(count, skippedLength);
    else if (skipping === 'deep') options.onTooDeep(count);
    else {
      const trimmed = current.trim();
      if (trimmed) {
        out.texts.push(trimmed);
        out.numbers.push(count);
      }
    }
    current = '';
    collecting = false;
    skipping = undefined;
  };
  for await (const chunk of text) {
    const out: ArrayElements = { texts: [], numbers: [] };
    let start = 0; // start of the not-yet-copied part of this chunk that belongs to `current`
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92) escaped = true;
        else if (c === 34) inString = false;
        continue;
      }
      const elementLevel = arrayTop ? 1 : 0;
      if (!collecting) {
        if (c === 32 || c === 10 || c === 13 || c === 9 || (c === 44 && depth === elementLevel)) continue;
        if (c === 91 && depth === 0) {
          depth = 1;
          arrayTop = true;
          continue;
        }
        if (c === 93 && depth === 1 && arrayTop) {
          depth = 0;
          arrayTop = false;
          continue;
        }
        collecting = true;
        start = i;
      }
      if (c === 34) inString = true;
      else if (c === 123 || c === 91) {
        if (++depth - elementLevel > options.maxDepth && skipping === undefined) {
          // Too deep to parse: nothing more of it is kept.
          skipping = 'deep';
          current = '';
        }
      } else if (c === 125 || c === 93) {
        if (depth === elementLevel && c === 93 && arrayTop) {
          // `]` closing the top-level array ends the element before it.
          append(chunk.slice(start, i));
          emit(out);
          depth = 0;
          arrayTop = false;
          continue;
        }
        depth--;
        if (depth === elementLevel) {
          append(chunk.slice(start, i + 1));
          emit(out);
        }
      } else if ((c === 44 && depth === elementLevel) || (c === 10 && depth === 0)) {
        append(chunk.slice(start, i));
        emit(out);
      }
    }
    if (collecting) append(chunk.slice(start));
    if (out.texts.length) yield out;
  }
  if (collecting) {
    const out: ArrayElements = { texts: [], numbers: [] };
    emit(out);
    if (out.texts.length) yield out;
  }

  function append(part: string) {
    if (skipping === 'long') skippedLength += part.length;
    if (skipping) return;
    if (current.length + part.length > options.maxChars) {
      skipping = 'long';
      skippedLength = current.length + part.length;
      current = '';
      return;
    }
    current += part;
  }
}

/**
 * Whether the JSON in `text` nests deeper than `limit` levels of arrays and objects
 * (brackets inside strings do not count). Text that is not JSON is measured the same way.
 * Text no longer than `limit` cannot, and is not scanned.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  if (text.length <= limit) return false;
  // Nor can text with no more than `limit` opening brackets, found by `indexOf` (native),
  // so that a common line costs a few calls rather than a loop over its characters.
  let opening = 0;
  for (let at = text.indexOf('{'); at !== -1 && opening <= limit; at = text.indexOf('{', at + 1)) opening++;
  for (let at = text.indexOf('['); at !== -1 && opening <= limit; at = text.indexOf('[', at + 1)) opening++;
  if (opening <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // On to the closing quote: the next one after an even number of backslashes.
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i === -1) return false;
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === 92) backslashes++;
        if ((backslashes & 1) === 0) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
