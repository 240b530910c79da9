/**
 * Reads a job file: bytes → UTF-8 text → YAML (duplicate keys refused, alias
 * expansion bounded so a "billion laughs" document is refused at once) → validation,
 * with every error placed at the line and column of the node it is about.
 *
 * @example
 *   const result = parseJobYaml(readFileSync('job.yaml'));
 *   if (!result.ok) for (const e of result.errors) console.log(`${e.line}:${e.column}: ${e.path}: ${e.message}`);
 */
import { type Document, isMap, isPair, isScalar, LineCounter, parseDocument } from 'yaml';
import type { ErrorDetail } from '../errors.ts';
import { expressionPosition } from './actions/expression-position.ts';
import type { Level } from './fields.ts';
import type { JobDefinition } from './schema.ts';
import { validateJob } from './validate.ts';

export const MAX_JOB_FILE_BYTES = 1024 * 1024;
const MAX_ALIAS_COUNT = 100;

export type ParseResult =
  | { ok: true; job: JobDefinition; document: Document; raw: unknown }
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
            : firstLine(error.message);
        return { path: '', message, line: pos.line, column: pos.col };
      }),
    };
  }
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    return fail(
      '',
      `the YAML expands too much through aliases (${(err as Error).message}); write values out instead`,
    );
  }
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
  if (!result.ok) {
    // Errors about a key (unknown, malformed) point at the key; all others at the offending value.
    const errors = result.errors.map((e) => ({
      ...e,
      ...(expressionPosition(document, lineCounter, text, e.path, e.message) ??
        positionOf(document, lineCounter, e.path, /^(unknown field|key `)/.test(e.message))),
    }));
    return { ok: false, errors };
  }
  return { ok: true, job: result.job, document, raw };
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

/** Line and column of the node a dotted path names, or of its nearest existing ancestor. */
function positionOf(
  document: Document,
  lineCounter: LineCounter,
  path: string,
  atKey: boolean,
): { line?: number; column?: number } {
  const segments = path === '' ? [] : path.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  if (!atKey && segments.length > 0) {
    const value = document.getIn(segments, true) as { range?: [number, number, number] } | undefined;
    if (value?.range) {
      const pos = lineCounter.linePos(value.range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  for (let length = segments.length; length >= 0; length--) {
    const parentPath = segments.slice(0, length - 1);
    const key = segments[length - 1];
    const parent = length === 0 ? document.contents : document.getIn(parentPath, true);
    let offset: number | undefined;
    if (length === 0) offset = document.contents?.range?.[0];
    else if (isMap(parent)) {
      const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      const node = pair && (isScalar(pair.key) ? pair.key : undefined);
      offset = node?.range?.[0];
    } else {
      const node = document.getIn([...parentPath, key], true) as
        | { range?: [number, number, number] }
        | undefined;
      offset = node?.range?.[0];
    }
    if (offset !== undefined) {
      const pos = lineCounter.linePos(offset);
      return { line: pos.line, column: pos.col };
    }
  }
  return {};
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
