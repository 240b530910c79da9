/**
 * References a worker resolves when it runs a job, never the control plane:
 * `${secret|scope/name}` (a secret; no default form) and `${dyn|NAME}` or
 * `${dyn|NAME||fallback}` (a variable, with a fallback when it does not exist).
 * They pass through rendering untouched, so nothing stored or returned holds a value.
 *
 * @example
 *   findRuntimeRefs(definition); // { secrets: ['db/password'], variables: ['ENV'] }
 *   resolveRuntimeRefs(definition, { secrets: { 'db/password': 's3cret' }, variables: {} });
 */

const REF = /\$\{(secret|dyn)\|([^}|]+?)(?:\|\|([^}]*))?\}/g;

export interface RuntimeRefs {
  secrets: string[];
  variables: string[];
}

export function findRuntimeRefs(value: unknown): RuntimeRefs {
  const secrets = new Set<string>();
  const variables = new Set<string>();
  walkStrings(value, (text) => {
    for (const m of text.matchAll(REF)) (m[1] === 'secret' ? secrets : variables).add(m[2]!.trim());
    return text;
  });
  return { secrets: [...secrets].sort(), variables: [...variables].sort() };
}

export interface RuntimeValues {
  secrets: Record<string, string>;
  variables: Record<string, string>;
}

/** Substitutes every reference; missing secrets and fallback-less missing variables are errors. */
export function resolveRuntimeRefs<T>(
  value: T,
  values: RuntimeValues,
): { ok: true; value: T } | { ok: false; missing: string[] } {
  const missing: string[] = [];
  const resolved = walkStrings(value, (text) =>
    text.replace(REF, (whole, kind: string, name: string, fallback: string | undefined) => {
      const key = name.trim();
      const found = kind === 'secret' ? values.secrets[key] : values.variables[key];
      if (found !== undefined) return found;
      if (kind === 'dyn' && fallback !== undefined) return fallback;
      missing.push(`${kind === 'secret' ? 'secret' : 'variable'} ${key}`);
      return whole;
    }),
  );
  return missing.length ? { ok: false, missing } : { ok: true, value: resolved as T };
}

function walkStrings(value: unknown, visit: (text: string) => string): unknown {
  if (typeof value === 'string') return visit(value);
  if (Array.isArray(value)) return value.map((item) => walkStrings(item, visit));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walkStrings(v, visit)]));
  }
  return value;
}
