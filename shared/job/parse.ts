/**
 * Reads a job file: bytes → UTF-8 text → YAML (duplicate keys refused, alias
 * expansion bounded so a "billion laughs" document is refused at once) → validation,
 * with every error placed at the line and column of the node it is about.
 *
 * @example
 *   const result = parseJobYaml(readFileSync('job.yaml'));
 *   if (!result.ok) for (const e of result.errors) console.log(`${e.line}:${e.column}: ${e.path}: ${e.message}`);
 */
import {
  type Document,
  isMap,
  isNode,
  isScalar,
  isSeq,
  LineCounter,
  type Pair,
  parseDocument,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { ErrorDetail } from '../errors.ts';
import { expressionPosition } from './actions/expression-position.ts';
import { type Level, TEMPLATE_PATTERN } from './fields.ts';
import type { JobDefinition } from './schema.ts';
import { validateJob } from './validate.ts';

export const MAX_JOB_FILE_BYTES = 1024 * 1024;
const MAX_ALIAS_COUNT = 100;
/**
 * How deep maps and lists may nest in a job file: a job has a few levels, and validation
 * walks values recursively (as the API refuses JSON bodies deeper than 64, body-rules.ts).
 */
const MAX_NESTING = 64;
const TOO_DEEP = `maps and lists nest more than ${MAX_NESTING} levels deep: a job needs only a few`;

/** Whether `value` holds maps and lists more than `limit` deep, counted without recursion. */
function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

export type ParseResult =
  | {
      ok: true;
      job: JobDefinition;
      document: Document;
      raw: unknown;
      /**
       * Places errors found in the job once rendered (`sluice job run`) as validation errors
       * are placed: each at the node its path names in the file, or the nearest one that
       * exists (a value a whole `{{key}}` brought in has no node of its own).
       */
      place: (errors: readonly ErrorDetail[]) => ErrorDetail[];
    }
  | { ok: false; errors: ErrorDetail[] };

export function parseJobYaml(
  input: string | Uint8Array,
  /** `level`: the validation level (default saved), or a choice of it once the YAML is read. */
  options: { level?: Level | ((raw: Record<string, unknown>) => Level) } = {},
): ParseResult {
  const text = decode(input);
  if (typeof text !== 'string') return text;
  if (text.trim() === '') return fail('', 'the file is empty: a job needs name, input and output');

  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  if (document.errors.length > 0) {
    return {
      ok: false,
      errors: document.errors.map((error) => {
        const pos = lineCounter.linePos(error.pos[0]);
        const message =
          error.code === 'DUPLICATE_KEY'
            ? 'duplicate key: each field may appear once'
            : /call stack/i.test(error.message)
              ? TOO_DEEP
              : firstLine(error.message);
        return { path: '', message, line: pos.line, column: pos.col };
      }),
    };
  }
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    if (err instanceof RangeError) return fail('', TOO_DEEP);
    return fail(
      '',
      `the YAML expands too much through aliases (${(err as Error).message}); write values out instead`,
    );
  }
  if (nestsDeeper(raw, MAX_NESTING)) return fail('', TOO_DEEP);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return fail(
      '',
      `a job file must be a map with name, input and output, not ${Array.isArray(raw) ? 'a list' : 'a single value'}`,
      1,
      1,
    );
  }
  const level =
    typeof options.level === 'function' ? options.level(raw as Record<string, unknown>) : options.level;
  const result = validateJob(raw, { level: level ?? 'saved' });
  if (!result.ok) return { ok: false, errors: placed(document, lineCounter, text, result.errors, false) };
  return {
    ok: true,
    job: result.job,
    document,
    raw,
    place: (errors) => placed(document, lineCounter, text, errors, true),
  };
}

/**
 * The errors with the line and column of what each is about: errors about a key (unknown,
 * malformed) point at the key; all others at the offending value, or inside a CEL expression
 * at the character its message names. After rendering (`rendered`), that character counts in
 * the rendered expression, which is the file's text only where the file's holds no `{{...}}`.
 */
function placed(
  document: Document,
  lineCounter: LineCounter,
  text: string,
  errors: readonly ErrorDetail[],
  rendered: boolean,
): ErrorDetail[] {
  return errors.map((e) => ({
    ...e,
    ...((rendered && holdsReference(document, e.path)
      ? undefined
      : expressionPosition(document, lineCounter, text, e.path, e.message)) ??
      positionOf(document, lineCounter, e.path, /^(unknown field|key `)/.test(e.message))),
  }));
}

/** Whether the file's value at a dotted path is a string with a `{{...}}` reference. */
function holdsReference(document: Document, path: string): boolean {
  const { steps, complete } = stepsAlong(document, path);
  const node = complete ? steps.at(-1)?.value : undefined;
  return isScalar(node) && typeof node.value === 'string' && TEMPLATE_PATTERN.test(node.value);
}

function decode(input: string | Uint8Array): string | { ok: false; errors: ErrorDetail[] } {
  const size = typeof input === 'string' ? Buffer.byteLength(input) : input.byteLength;
  if (size > MAX_JOB_FILE_BYTES)
    return fail('', `the file is ${size} bytes; a job file may be at most 1 MiB`);
  if (typeof input === 'string') return input;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(input);
  } catch {
    return fail('', 'the file is not valid UTF-8 text');
  }
}

/**
 * Line and column of the node a dotted path names, or of its nearest existing ancestor;
 * with `atKey`, of its key rather than its value.
 */
function positionOf(
  document: Document,
  lineCounter: LineCounter,
  path: string,
  atKey: boolean,
): { line?: number; column?: number } {
  const { steps, complete } = stepsAlong(document, path);
  const value = complete && !atKey ? rangeOf(steps.at(-1)?.value) : undefined;
  const range =
    value ??
    steps.map((step) => rangeOf(step.key)).findLast((r) => r !== undefined) ??
    rangeOf(document.contents);
  if (!range) return {};
  const pos = lineCounter.linePos(range[0]);
  return { line: pos.line, column: pos.col };
}

/** One step down a path: a map's key and its value, or a list's item (its own key). */
interface Step {
  key: unknown;
  value: unknown;
}

/**
 * The document's nodes along a dotted path, as far as they exist. A map's key may hold
 * dots itself (`set: {http.code: ...}`, `rename: {a..b: c}`), so each step takes the
 * longest key the rest of the path starts with, not the next dot-separated segment.
 */
function stepsAlong(document: Document, path: string): { steps: Step[]; complete: boolean } {
  const steps: Step[] = [];
  let node: unknown = document.contents;
  // What is left of the path; undefined once all of it is found ('' is an empty key still to find).
  let rest: string | undefined = path === '' ? undefined : path;
  while (rest !== undefined) {
    const found = isMap(node) ? keyIn(node, rest) : isSeq(node) ? itemIn(node, rest) : undefined;
    if (!found) break;
    steps.push(found.step);
    node = found.step.value;
    rest = found.rest;
  }
  return { steps, complete: rest === undefined };
}

function keyIn(map: YAMLMap, path: string): { step: Step; rest: string | undefined } | undefined {
  let best: { pair: Pair; key: string } | undefined;
  for (const pair of map.items) {
    if (!isScalar(pair.key)) continue;
    const key = String(pair.key.value);
    if ((path === key || path.startsWith(`${key}.`)) && key.length >= (best?.key.length ?? 0))
      best = { pair, key };
  }
  if (!best) return undefined;
  return {
    step: { key: best.pair.key, value: best.pair.value },
    rest: path === best.key ? undefined : path.slice(best.key.length + 1),
  };
}

function itemIn(list: YAMLSeq, path: string): { step: Step; rest: string | undefined } | undefined {
  const match = /^(\d+)(?:\.|$)/.exec(path);
  const item = match ? list.items[Number(match[1])] : undefined;
  if (!match || item === undefined) return undefined;
  const rest = path.slice(match[0].length);
  return { step: { key: item, value: item }, rest: match[0].endsWith('.') ? rest : undefined };
}

function rangeOf(node: unknown): readonly [number, number, number] | undefined {
  return isNode(node) ? (node.range ?? undefined) : undefined;
}

function fail(
  path: string,
  message: string,
  line?: number,
  column?: number,
): { ok: false; errors: ErrorDetail[] } {
  return { ok: false, errors: [{ path, message, ...(line ? { line, column: column ?? 1 } : {}) }] };
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}
