/**
 * References a worker resolves when it runs a job, never the control plane:
 * `${secret|scope/name}` (a secret; no default form) and `${dyn|NAME}` or
 * `${dyn|NAME||fallback}` (a variable, with a fallback when it does not exist).
 * They pass through rendering untouched, so nothing stored or returned holds a value.
 *
 * `runtimeReferenceProblem` says what is wrong with a malformed one, so that a job is refused
 * where it is written (validate, save, render) instead of a worker receiving the text as it
 * is. What counts as an attempted reference: `${` and a name followed by `|`, where the name
 * is `secret` or `dyn` (in any case, spaces around it allowed: `${ Secret |` is a mistake),
 * or any other name written right after `${` and followed by a single `|` (`${secrets|x}`,
 * `${var|X}`). Not attempts, and left alone: `${HOME}`, `${HOME:-/root}`, a lone `${` or
 * `$`, `${ a | b }`, and `${a||b}` (JavaScript's "or" in a template literal). There is no
 * escape for `${`: a name and `|` after it are reserved for these references. The
 * well-formed ones are exactly those REF resolves: a secret's `scope/name` are resource
 * names (letters, digits, . _ -), a variable's NAME a variable name, a fallback any text
 * without `}`, spaces around the name ignored.
 *
 * @example
 *   findRuntimeRefs(definition); // { secrets: ['db/password'], variables: ['ENV'] }
 *   resolveRuntimeRefs(definition, { secrets: { 'db/password': 's3cret' }, variables: {} });
 *   runtimeReferenceProblem('${secret|db}'); // '`${secret|db}` is not a secret reference: ...'
 */
import { RESOURCE_ID } from './auth/names.ts';
import { closest } from './job/suggest.ts';

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
      // Own properties only: `${dyn|constructor}` is a missing variable, not Object's constructor.
      const store = kind === 'secret' ? values.secrets : values.variables;
      const found = Object.hasOwn(store, key) ? store[key] : undefined;
      if (found !== undefined) return found;
      if (kind === 'dyn' && fallback !== undefined) return fallback;
      missing.push(`${kind === 'secret' ? 'secret' : 'variable'} ${key}`);
      return whole;
    }),
  );
  return missing.length ? { ok: false, missing } : { ok: true, value: resolved as T };
}

/** Variable names, as `PUT /api/variables/{name}` takes them (functions/variables/routes.ts). */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
/**
 * Names Firestore keeps for itself (`__name__`, any `__…__`): refused as document ids, so a
 * variable, one document each, cannot have one (its request failed with a 500, and every
 * worker running a job that referenced it could not fetch its variables).
 */
const RESERVED_BY_STORE = /^__.*__$/;
export const VARIABLE_NAME_RULE =
  'variable names start with a letter or _, hold letters, digits, _ . - (at most 128), and are not __…__ (names the store keeps for itself)';

export function isVariableName(name: string): boolean {
  return VARIABLE_NAME.test(name) && !RESERVED_BY_STORE.test(name);
}

const KINDS = ['secret', 'dyn'] as const;

/**
 * What is wrong with the first malformed runtime reference in `text`, or undefined when every
 * attempted one (see the top of this file) is well formed. Linear in the length of `text`: one
 * pass, no backtracking, and it stops at the first problem. A reference whose text holds
 * `deferred` (a `{{key}}` not yet rendered, masked by the caller) is judged after rendering.
 */
export function runtimeReferenceProblem(text: string, deferred?: string): string | undefined {
  let from = 0;
  for (;;) {
    const at = text.indexOf('${', from);
    if (at < 0) return undefined;
    from = at + 2;
    let i = skipSpaces(text, at + 2);
    const nameStart = i;
    while (i < text.length && isNameChar(text.charCodeAt(i))) i++;
    const name = text.slice(nameStart, i);
    const bar = skipSpaces(text, i);
    if (name === '' || text[bar] !== '|') continue;
    const kind = name.toLowerCase();
    const exact = nameStart === at + 2 && bar === i;
    if (kind !== 'secret' && kind !== 'dyn') {
      // `${a||b}` (JavaScript's or) and `${ a | b }` are text; `${secrets|x}` is a reference gone wrong.
      if (!exact || text[bar + 1] === '|' || !/^[A-Za-z_]/.test(name)) continue;
      return unknownKind(name);
    }
    if (!exact || name !== kind) return unknownKind(text.slice(at + 2, bar).trim(), text.slice(at, bar + 1));
    const bodyStart = bar + 1;
    const close = text.indexOf('}', bodyStart);
    if (close < 0) {
      if (deferred !== undefined && text.includes(deferred, bodyStart)) return undefined;
      // A secret's text after `||` is not repeated (see secretProblem).
      const fallback = kind === 'secret' ? text.indexOf('||', bodyStart) : -1;
      const written = fallback < 0 ? text.slice(at) : `${text.slice(at, fallback)}||…`;
      return `\`${excerpt(written, deferred)}\` has no closing }: write ${example(kind)}`;
    }
    from = close + 1;
    const body = text.slice(bodyStart, close);
    if (deferred !== undefined && body.includes(deferred)) continue;
    const problem = kind === 'secret' ? secretProblem(body) : variableProblem(body);
    if (problem) return problem;
  }
}

function secretProblem(body: string): string | undefined {
  // In `${secret||x}` the `||` starts at the bar after `secret`.
  const leading = body.startsWith('|');
  const fallback = leading ? 0 : body.indexOf('||');
  if (fallback >= 0) {
    // What follows `||` is not repeated: someone may have put the secret's value there.
    const head = leading ? `$\{secret` : `$\{secret|${body.slice(0, fallback)}`;
    return `\`${excerpt(head)}||…}\`: a secret reference has no default form (a missing secret is an error); to fall back on a value, use a variable: $\{dyn|NAME||fallback}`;
  }
  const parts = body.trim().split('/');
  if (parts.length === 2 && parts.every((part) => RESOURCE_ID.test(part))) return undefined;
  return `\`${excerpt(`$\{secret|${body}}`)}\` is not a secret reference: write ${example('secret')}, scope and name each of letters, digits, . _ - (at most 128)`;
}

function variableProblem(body: string): string | undefined {
  const fallback = body.indexOf('||');
  const name = (fallback < 0 ? body : body.slice(0, fallback)).trim();
  if (isVariableName(name)) return undefined;
  return `\`${excerpt(`$\{dyn|${body}}`)}\` is not a variable reference: write ${example('dyn')}; ${VARIABLE_NAME_RULE}`;
}

function unknownKind(name: string, written = `$\{${name}|`): string {
  const guess = closest(name, KINDS);
  return `\`${excerpt(written)}\` is not a runtime reference: write ${example('secret')} or ${example('dyn')}${guess ? `; did you mean \`$\{${guess}|\`?` : ''}`;
}

function example(kind: string): string {
  return kind === 'secret' ? `$\{secret|scope/name}` : `$\{dyn|NAME} or $\{dyn|NAME||fallback}`;
}

/** The start of a reference as written, short and on one line, for a message. */
export function excerpt(text: string, deferred?: string): string {
  let shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  if (deferred !== undefined) shown = shown.replaceAll(deferred, '{{…}}');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  return shown.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/** The index of the first non-space character at or after `i`. */
export function skipSpaces(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

function isNameChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x5f || // _
    code === 0x2d // -
  );
}

function walkStrings(value: unknown, visit: (text: string) => string): unknown {
  if (typeof value === 'string') return visit(value);
  if (Array.isArray(value)) return value.map((item) => walkStrings(item, visit));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walkStrings(v, visit)]));
  }
  return value;
}
