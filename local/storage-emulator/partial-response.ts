/**
 * The `fields` parameter of Google's JSON APIs (partial responses): a comma-separated
 * selection where `a/b` selects a nested field and `a(b,c)` several fields of `a`;
 * a selection on an array applies to each element. Clients such as the `gcs` input ask
 * for `items(name,generation,...),nextPageToken` to skip the rest of each resource,
 * and `@google-cloud/storage` then hands back plain objects, so the emulator must
 * answer with exactly the selected fields as GCS does.
 *
 * @example
 *   const select = parseFields('items(name,size),nextPageToken');
 *   applyFields({ kind: 'storage#objects', items: [{ name: 'a', size: '1', etag: 'x' }] }, select);
 *   // { items: [{ name: 'a', size: '1' }] }
 */

/** Field name to its sub-selection; `true` keeps the whole value. */
export type FieldSelection = Map<string, FieldSelection | true>;

export function parseFields(text: string): FieldSelection {
  let at = 0;
  const selection = (): FieldSelection => {
    const out: FieldSelection = new Map();
    for (;;) {
      const path: string[] = [];
      let name = '';
      while (at < text.length && !',()'.includes(text[at]!)) {
        const ch = text[at++]!;
        if (ch === '/') {
          path.push(name.trim());
          name = '';
        } else name += ch;
      }
      path.push(name.trim());
      let sub: FieldSelection | true = true;
      if (text[at] === '(') {
        at++;
        sub = selection();
        if (text[at] !== ')') throw new Error(`invalid fields: unbalanced parentheses in '${text}'`);
        at++;
      }
      if (path.some((p) => p === '')) throw new Error(`invalid fields: empty name in '${text}'`);
      merge(out, path, sub);
      if (text[at] !== ',') return out;
      at++;
    }
  };
  const parsed = selection();
  if (at !== text.length) throw new Error(`invalid fields: unexpected '${text[at]}' in '${text}'`);
  return parsed;
}

export function applyFields(value: unknown, selection: FieldSelection): unknown {
  if (Array.isArray(value)) return value.map((item) => applyFields(item, selection));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, sub] of selection) {
    const field = (value as Record<string, unknown>)[name];
    if (field === undefined) continue;
    out[name] = sub === true ? field : applyFields(field, sub);
  }
  return out;
}

function merge(into: FieldSelection, path: string[], sub: FieldSelection | true): void {
  const [head, ...rest] = path as [string, ...string[]];
  const existing = into.get(head);
  if (!rest.length) {
    if (sub === true || existing === true) into.set(head, true);
    else if (existing) for (const [k, v] of sub) merge(existing, [k], v);
    else into.set(head, sub);
    return;
  }
  if (existing === true) return;
  const child: FieldSelection = existing ?? new Map();
  into.set(head, child);
  merge(child, rest, sub);
}
