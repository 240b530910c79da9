/**
 * Renders a job definition for one worker (CONTRACT section 3): every string value in
 * `input` and `output`, at any depth, interpolates `{{key}}`, `{{ key }}`, `{{key.sub}}`
 * and `{{key.0}}`. A string that is exactly one reference takes the value with its JSON
 * type; inside a longer string the value is inserted as text (non-strings as compact
 * JSON). `\{{` is a literal `{{`. `${secret|...}` and `${dyn|...}` pass through for the
 * worker to resolve at run time. Every missing key is reported with the field using it,
 * and the result is validated at the rendered level.
 *
 * Templates are compiled once per definition object, so rendering one job for many
 * workers only walks precompiled parts.
 *
 * @example
 *   const result = renderJob(definition, resolveContext(layers).context);
 *   if (!result.ok) console.log(result.errors); // [{ path: 'input.gcs.bucket-name', message: 'missing context key `bucket`' }]
 */
import type { ErrorDetail } from '../errors.ts';
import type { JobDefinition } from '../job/schema.ts';
import { validateJob } from '../job/validate.ts';
import type { JsonValue } from './map.ts';

type Part = { text: string } | { ref: string[]; raw: string };
type Compiled =
  | { kind: 'literal'; value: unknown }
  | { kind: 'whole'; ref: string[]; raw: string; path: string }
  | { kind: 'text'; parts: Part[]; path: string }
  | { kind: 'array'; items: Compiled[] }
  | { kind: 'object'; entries: [string, Compiled][] };

const REFERENCE = /\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}$/;

const compiledCache = new WeakMap<object, { input: Compiled; output: Compiled }>();

export type RenderResult = { ok: true; definition: JobDefinition } | { ok: false; errors: ErrorDetail[] };

export function renderJob(
  definition: Record<string, unknown>,
  context: Record<string, JsonValue>,
): RenderResult {
  const interpolated = interpolateJob(definition, context);
  if (!interpolated.ok) return interpolated;
  const result = validateJob(interpolated.definition, { level: 'rendered' });
  return result.ok ? { ok: true, definition: result.job } : { ok: false, errors: result.errors };
}

/** Substitutes references without validating the result (`renderJob` does both). */
export function interpolateJob(
  definition: Record<string, unknown>,
  context: Record<string, JsonValue>,
): { ok: true; definition: Record<string, unknown> } | { ok: false; errors: ErrorDetail[] } {
  let compiled = compiledCache.get(definition);
  if (!compiled) {
    compiled = { input: compile(definition.input, 'input'), output: compile(definition.output, 'output') };
    compiledCache.set(definition, compiled);
  }
  const missing: ErrorDetail[] = [];
  const rendered = {
    ...definition,
    input: evaluate(compiled.input, context, missing),
    output: evaluate(compiled.output, context, missing),
  };
  return missing.length > 0 ? { ok: false, errors: missing } : { ok: true, definition: rendered };
}

/** Names of the context keys a definition references (first path segment), for impact checks. */
export function referencedKeys(definition: Record<string, unknown>): Set<string> {
  const keys = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const m of value.matchAll(REFERENCE)) if (m[1]) keys.add(m[1].split('.')[0]!);
    } else if (Array.isArray(value)) {
      value.forEach(walk);
    } else if (value && typeof value === 'object') {
      Object.values(value).forEach(walk);
    }
  };
  walk(definition.input);
  walk(definition.output);
  return keys;
}

function compile(value: unknown, path: string): Compiled {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return { kind: 'whole', ref: whole[1]!.split('.'), raw: value, path };
    if (!value.includes('{{')) return { kind: 'literal', value };
    const parts: Part[] = [];
    let last = 0;
    for (const m of value.matchAll(REFERENCE)) {
      if (m.index > last) parts.push({ text: value.slice(last, m.index) });
      parts.push(m[1] ? { ref: m[1].split('.'), raw: m[0] } : { text: '{{' });
      last = m.index + m[0].length;
    }
    if (last < value.length) parts.push({ text: value.slice(last) });
    return { kind: 'text', parts, path };
  }
  if (Array.isArray(value))
    return { kind: 'array', items: value.map((item, i) => compile(item, `${path}.${i}`)) };
  if (value && typeof value === 'object') {
    return {
      kind: 'object',
      entries: Object.entries(value).map(([k, v]) => [k, compile(v, `${path}.${k}`)]),
    };
  }
  return { kind: 'literal', value };
}

function evaluate(node: Compiled, context: Record<string, JsonValue>, missing: ErrorDetail[]): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'whole': {
      const found = lookup(context, node.ref);
      if (found === undefined) return reportMissing(missing, context, node.ref, node.path);
      return found;
    }
    case 'text': {
      let out = '';
      for (const part of node.parts) {
        if ('text' in part) {
          out += part.text;
          continue;
        }
        const found = lookup(context, part.ref);
        if (found === undefined) reportMissing(missing, context, part.ref, node.path);
        else out += typeof found === 'string' ? found : JSON.stringify(found);
      }
      return out;
    }
    case 'array':
      return node.items.map((item) => evaluate(item, context, missing));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, child] of node.entries) out[key] = evaluate(child, context, missing);
      return out;
    }
  }
}

function lookup(context: Record<string, JsonValue>, ref: string[]): JsonValue | undefined {
  let current: JsonValue | undefined = Object.hasOwn(context, ref[0]!) ? context[ref[0]!] : undefined;
  for (let i = 1; i < ref.length && current !== undefined; i++) {
    const segment = ref[i]!;
    if (Array.isArray(current)) current = /^\d+$/.test(segment) ? current[Number(segment)] : undefined;
    else if (current !== null && typeof current === 'object' && Object.hasOwn(current, segment))
      current = current[segment];
    else current = undefined;
  }
  return current === null ? null : current;
}

function reportMissing(
  missing: ErrorDetail[],
  context: Record<string, JsonValue>,
  ref: string[],
  path: string,
): undefined {
  const rootExists = Object.hasOwn(context, ref[0]!);
  missing.push({
    path,
    message: rootExists
      ? `context key \`${ref.join('.')}\` does not resolve`
      : `missing context key \`${ref[0]}\``,
  });
  return undefined;
}
