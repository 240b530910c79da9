/**
 * `matchGlob` of the GCS list API: `*` within one path segment, `**` across
 * segments, `?` one character, `[abc]` / `[!abc]` classes, `{a,b}` alternatives.
 */

export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        i++;
        // `**/` may also match nothing, so `a/**/b` matches `a/b`.
        if (glob[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) out += '\\[';
      else {
        let cls = glob.slice(i + 1, end);
        if (cls.startsWith('!')) cls = '^' + cls.slice(1);
        out += `[${cls.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (ch === '{') {
      const end = glob.indexOf('}', i + 1);
      if (end === -1) out += '\\{';
      else {
        out += `(?:${glob
          .slice(i + 1, end)
          .split(',')
          .map((alt) => alt.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
          .join('|')})`;
        i = end;
      }
    } else out += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, 's');
}
