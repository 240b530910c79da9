/**
 * Streams the elements of top-level JSON arrays (a file holding `[ {...}, {...} ]`,
 * pretty-printed or not, or several arrays one after another) as separate texts, so a
 * large array becomes one event per element without parsing, or holding, the whole
 * file. Top-level values that are not arrays pass through whole. Each element is at
 * most `maxChars` long; a longer one is reported and skipped.
 *
 * @example
 *   for await (const texts of splitJsonArrays(text, { maxChars, onTooLong })) texts.map((t) => JSON.parse(t));
 */

export async function* splitJsonArrays(
  text: AsyncIterable<string>,
  options: { maxChars: number; onTooLong(element: number, length: number): void },
): AsyncGenerator<string[]> {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let arrayTop = false; // inside a top-level array: elements are at depth 1
  let current = '';
  let collecting = false;
  let skipping = false;
  let count = 0;
  const emit = (out: string[]) => {
    count++;
    if (skipping) options.onTooLong(count, current.length);
    else {
      const trimmed = current.trim();
      if (trimmed) out.push(trimmed);
    }
    current = '';
    collecting = false;
    skipping = false;
  };
  for await (const chunk of text) {
    const out: string[] = [];
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
      else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
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
    if (out.length) yield out;
  }
  if (collecting) {
    const out: string[] = [];
    emit(out);
    if (out.length) yield out;
  }

  function append(part: string) {
    if (skipping) return;
    if (current.length + part.length > options.maxChars) {
      skipping = true;
      current = '';
      return;
    }
    current += part;
  }
}
