/**
 * Renders a job definition for one worker (CONTRACT section 3): every string value in
 * `input` and `output` (and `actions`, a Sluice extension), at any depth, interpolates `{{key}}`, `{{ key }}`, `{{key.sub}}`
 * and `{{key.0}}`. A string that is exactly one reference takes the value with its JSON
 * type; inside a longer string the value is inserted as text (non-strings as compact
 * JSON). `\{{` is a literal `{{`. `${secret|...}` and `${dyn|...}` pass through for the
 * worker to resolve at run time. Every missing key is reported with the field using it,
 * and the result is validated at the rendered level.
 *
 * A malformed reference is an error at the field that holds it, never text sent to a worker:
 * a `{{...}}` of the definition (shared/job/reference-syntax.ts, which also splits templates
 * here), and a `${...}` of the rendered result, where a context value may have brought it in
 * (shared/runtime-refs.ts).
 *
 * Templates are compiled once per definition object, so rendering one job for many
 * workers only walks precompiled parts.
 *
 * Rendering is bounded: a job may hold at most MAX_REFERENCES references, and its rendered
 * `input` and `output` at most MAX_RENDERED_BYTES (UTF-8). The size is counted while the
 * strings are built and rendering stops as soon as it is exceeded, so a large value
 * referenced many times costs about the limit, not gigabytes. Lookups read own properties
 * only: `{{constructor}}` is a missing key, like any other name the context does not hold.
 *
 * @example
 *   const result = renderJob(definition, resolveContext(layers).context);
 *   if (!result.ok) console.log(result.errors); // [{ path: 'input.gcs.bucket-name', message: 'missing context key `bucket`' }]
 */
import type { ErrorDetail } from '../errors.ts';
import { parseTemplate, type TemplatePart } from '../job/reference-syntax.ts';
import type { JobDefinition } from '../job/schema.ts';
import { validateJob } from '../job/validate.ts';
import { runtimeReferenceProblem } from '../runtime-refs.ts';
import type { JsonValue } from './map.ts';

type Compiled =
  | { kind: 'literal'; value: unknown }
  | { kind: 'whole'; ref: string[]; raw: string; path: string }
  | { kind: 'text'; parts: TemplatePart[]; path: string }
  | { kind: 'array'; items: Compiled[] }
  | { kind: 'object'; entries: [string, Compiled][] };

/** Far beyond any real job (jobs are at most 1 MiB as saved), small enough that rendering stays cheap. */
export const MAX_RENDERED_BYTES = 1024 * 1024;
export const MAX_REFERENCES = 10_000;

/** The parts of a job that are rendered: its input and output, and its actions (a Sluice extension). */
interface CompiledJob {
  input: Compiled;
  output: Compiled;
  actions?: Compiled;
  references: number;
  /** Malformed `{{...}}` references, each at its field. */
  malformed: ErrorDetail[];
}

const compiledCache = new WeakMap<object, CompiledJob>();

/** Thrown inside evaluation when the output passes MAX_RENDERED_BYTES; caught by interpolateJob. */
class RenderedTooLarge {
  constructor(readonly path: string) {}
}

/** The running size of one rendering, and the text of each non-string value it inserted. */
interface Budget {
  bytes: number;
  sizes: Map<string, { text: string; bytes: number }>;
}

export type RenderResult = { ok: true; definition: JobDefinition } | { ok: false; errors: ErrorDetail[] };

export function renderJob(
  definition: Record<string, unknown>,
  context: Record<string, JsonValue>,
): RenderResult {
  const interpolated = interpolateJob(definition, context);
  if (!interpolated.ok) return interpolated;
  const malformed = malformedRuntimeReferences(interpolated.definition);
  if (malformed.length > 0) return { ok: false, errors: malformed };
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
    const malformed: ErrorDetail[] = [];
    const input = compile(definition.input, 'input', malformed);
    const output = compile(definition.output, 'output', malformed);
    // Context values go into action expressions as text, before CEL compiles them.
    const actions =
      definition.actions === undefined ? undefined : compile(definition.actions, 'actions', malformed);
    compiled = {
      input,
      output,
      ...(actions ? { actions } : {}),
      references: countReferences(input) + countReferences(output) + (actions ? countReferences(actions) : 0),
      malformed,
    };
    compiledCache.set(definition, compiled);
  }
  if (compiled.malformed.length > 0) return { ok: false, errors: compiled.malformed };
  if (compiled.references > MAX_REFERENCES) {
    return {
      ok: false,
      errors: [
        {
          path: '',
          message: `the job uses ${compiled.references} context references, more than ${MAX_REFERENCES} context references allowed in one job`,
        },
      ],
    };
  }
  const missing: ErrorDetail[] = [];
  const budget: Budget = { bytes: 0, sizes: new Map() };
  try {
    const rendered = {
      ...definition,
      input: evaluate(compiled.input, context, missing, budget),
      output: evaluate(compiled.output, context, missing, budget),
      ...(compiled.actions ? { actions: evaluate(compiled.actions, context, missing, budget) } : {}),
    };
    return missing.length > 0 ? { ok: false, errors: missing } : { ok: true, definition: rendered };
  } catch (err) {
    if (!(err instanceof RenderedTooLarge)) throw err;
    return {
      ok: false,
      errors: [
        {
          path: err.path,
          message: `the job renders to more than 1 MiB (${MAX_RENDERED_BYTES} bytes); a context value is too large or referenced too often`,
        },
      ],
    };
  }
}

/** Names of the context keys a definition references (first path segment), for impact checks. */
export function referencedKeys(definition: Record<string, unknown>): Set<string> {
  const keys = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const parsed = value.includes('{{') ? parseTemplate(value) : undefined;
      if (parsed?.ok) for (const part of parsed.parts) if ('ref' in part) keys.add(part.ref[0]!);
    } else if (Array.isArray(value)) {
      value.forEach(walk);
    } else if (value && typeof value === 'object') {
      Object.values(value).forEach(walk);
    }
  };
  walk(definition.input);
  walk(definition.output);
  walk(definition.actions);
  return keys;
}

function compile(value: unknown, path: string, malformed: ErrorDetail[]): Compiled {
  if (typeof value === 'string') {
    if (!value.includes('{{')) return { kind: 'literal', value };
    const parsed = parseTemplate(value);
    if (!parsed.ok) {
      malformed.push({ path, message: parsed.problem });
      return { kind: 'literal', value };
    }
    const [first] = parsed.parts;
    if (parsed.parts.length === 1 && first && 'ref' in first && first.raw === value)
      return { kind: 'whole', ref: first.ref, raw: value, path };
    return { kind: 'text', parts: parsed.parts, path };
  }
  if (Array.isArray(value))
    return { kind: 'array', items: value.map((item, i) => compile(item, `${path}.${i}`, malformed)) };
  if (value && typeof value === 'object') {
    return {
      kind: 'object',
      entries: Object.entries(value).map(([k, v]) => [k, compile(v, `${path}.${k}`, malformed)]),
    };
  }
  return { kind: 'literal', value };
}

/**
 * Malformed `${...}` references in the rendered input, output and actions, each at its field:
 * what a worker would receive. Paths are joined only for a problem, so a valid job (the hot
 * path: every stage, deploy and worker poll) costs one `includes` per string.
 */
function malformedRuntimeReferences(rendered: Record<string, unknown>): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  const path: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const problem = value.includes('${') ? runtimeReferenceProblem(value) : undefined;
      if (problem) found.push({ path: path.join('.'), message: problem });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => {
        path.push(String(i));
        walk(item);
        path.pop();
      });
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        path.push(key);
        walk(item);
        path.pop();
      }
    }
  };
  for (const part of ['input', 'output', 'actions']) {
    path.push(part);
    walk(rendered[part]);
    path.pop();
  }
  return found;
}

function countReferences(node: Compiled): number {
  switch (node.kind) {
    case 'literal':
      return 0;
    case 'whole':
      return 1;
    case 'text':
      return node.parts.filter((part) => 'ref' in part).length;
    case 'array':
      return node.items.reduce((sum, item) => sum + countReferences(item), 0);
    case 'object':
      return node.entries.reduce((sum, [, child]) => sum + countReferences(child), 0);
  }
}

function evaluate(
  node: Compiled,
  context: Record<string, JsonValue>,
  missing: ErrorDetail[],
  budget: Budget,
): unknown {
  switch (node.kind) {
    case 'literal':
      if (typeof node.value === 'string') spend(budget, utf8Length(node.value), '');
      return node.value;
    case 'whole': {
      const found = lookup(context, node.ref);
      if (found === undefined) return reportMissing(missing, context, node.ref, node.path);
      spend(budget, insertion(budget, node.raw, found).bytes, node.path);
      return found;
    }
    case 'text': {
      let out = '';
      for (const part of node.parts) {
        if ('text' in part) {
          spend(budget, utf8Length(part.text), node.path);
          out += part.text;
          continue;
        }
        const found = lookup(context, part.ref);
        if (found === undefined) {
          reportMissing(missing, context, part.ref, node.path);
          continue;
        }
        const inserted = insertion(budget, part.raw, found);
        spend(budget, inserted.bytes, node.path);
        out += inserted.text;
      }
      return out;
    }
    case 'array':
      return node.items.map((item) => evaluate(item, context, missing, budget));
    case 'object':
      // fromEntries defines own properties: a `__proto__` key stays a key, never a prototype.
      return Object.fromEntries(
        node.entries.map(([key, child]) => [key, evaluate(child, context, missing, budget)]),
      );
  }
}

/** Counts `bytes` against the budget before anything that size is built. */
function spend(budget: Budget, bytes: number, path: string): void {
  budget.bytes += bytes;
  if (budget.bytes > MAX_RENDERED_BYTES) throw new RenderedTooLarge(path);
}

/** The text a reference inserts and its size, measured once per reference per rendering. */
function insertion(budget: Budget, raw: string, value: JsonValue): { text: string; bytes: number } {
  let known = budget.sizes.get(raw);
  if (!known) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    known = { text, bytes: utf8Length(text) };
    budget.sizes.set(raw, known);
  }
  return known;
}

function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Each UTF-16 unit is already counted once: add what its UTF-8 form takes beyond that.
    if (code >= 0x80) bytes += code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 1 : 2;
  }
  return bytes;
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
