/**
 * Validates a job definition (already parsed from YAML or JSON) at the saved or
 * rendered level, and turns zod issues into the contract's `details`: a dotted path
 * and a message a person can act on ("required field `bucket-name` is missing").
 *
 * @example
 *   const result = validateJob(value, { level: 'rendered' });
 *   if (!result.ok) console.log(result.errors);
 */
import type { z } from 'zod';
import { PROTOTYPE_NAME_MESSAGE } from '../auth/names.ts';
import { type ErrorDetail, formatPath } from '../errors.ts';
import { sourceInputProblem } from '../object-name-template.ts';
import { withRegexBudget } from '../regex.ts';
import { describeValue, type Level, TEMPLATE_PATTERN, unknownKeyMessages } from './fields.ts';
import { INPUT_KIND_NAMES, type JobDefinition, jobSchema } from './schema.ts';

/**
 * Steps all of one job's new patterns may expand to (regex.ts): about 30 MB and 0.1-0.2 s
 * of compiling, so no job definition, however many patterns it carries, holds the API.
 */
export const JOB_REGEX_BUDGET = 20_000;

export type ValidationResult<T> = { ok: true; job: T } | { ok: false; errors: ErrorDetail[] };

export function validateJob(value: unknown, options: { level: Level }): ValidationResult<JobDefinition> {
  const protoKeys = protoKeyPaths(value);
  if (protoKeys.length)
    return { ok: false, errors: protoKeys.map((path) => ({ path, message: PROTOTYPE_NAME_MESSAGE })) };
  const result = withRegexBudget(JOB_REGEX_BUDGET, () =>
    jobSchema(options.level).safeParse(value, { reportInput: true }),
  );
  const crossed = crossSectionProblems(value);
  if (result.success && crossed.length === 0) return { ok: true, job: result.data as JobDefinition };
  return {
    ok: false,
    errors: dedupe([...(result.success ? [] : issuesToJobErrors(result.error.issues)), ...crossed]),
  };
}

/**
 * Rules that tie one section of a job to another, which a component's schema cannot check
 * (it sees its own section only). Read from the value as given, so they are reported along
 * with the schema's errors; a part of the wrong shape or kind is left to the schema. At the
 * saved levels they see the text as written, and renderJob runs them again on the rendered one.
 */
function crossSectionProblems(value: unknown): ErrorDetail[] {
  const input = member(value, 'input');
  const template = member(member(member(value, 'output'), 'gcs'), 'object-name');
  if (typeof template !== 'string' || input === null || typeof input !== 'object') return [];
  const kinds = Object.keys(input);
  if (kinds.length !== 1 || !(INPUT_KIND_NAMES as string[]).includes(kinds[0]!)) return [];
  // {source} and {generation} name what the gcs input read; another input reads no objects.
  const problem = sourceInputProblem(template, kinds[0]!);
  return problem ? [{ path: 'output.gcs.object-name', message: problem }] : [];
}

function member(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** Flattens unions to the branch the user evidently meant and words each issue for people. */
export function issuesToJobErrors(
  issues: readonly z.core.$ZodIssue[],
  prefix: PropertyKey[] = [],
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      details.push(...issuesToJobErrors(pickBranch(issue.errors), path));
      continue;
    }
    if (issue.code === 'invalid_key' && issue.issues.length > 0) {
      details.push({
        path: formatPath(path),
        message: `key \`${String(path[path.length - 1])}\` ${issue.issues[0]!.message}`,
      });
      continue;
    }
    if (issue.code === 'unrecognized_keys') {
      // One issue for all of a map's unknown keys; each is reported at its own key.
      const messages = unknownKeyMessages(issue.message, issue.keys);
      issue.keys.forEach((key, i) => {
        details.push({ path: formatPath([...path, key]), message: messages[i]! });
      });
      continue;
    }
    details.push({ path: formatPath(path), message: wordIssue(issue, path) });
  }
  return dedupe(details);
}

function wordIssue(issue: z.core.$ZodIssue, path: PropertyKey[]): string {
  if (issue.code === 'invalid_type' && !issue.message.startsWith('Invalid input')) return issue.message;
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined)
      return `required field \`${String(path[path.length - 1] ?? 'value')}\` is missing`;
    return `expected ${article(issue.expected)}, got ${describeValue(issue.input)}`;
  }
  if (issue.code === 'too_small' && issue.origin === 'number') return `must be at least ${issue.minimum}`;
  return issue.message;
}

/**
 * Of a union's failed branches, the one the user evidently meant: never the
 * `{{...}}` alternative that the saved level adds, and preferably one whose type matches.
 */
function pickBranch(branches: readonly (readonly z.core.$ZodIssue[])[]): readonly z.core.$ZodIssue[] {
  const real = branches.filter((issues) => !isTemplateAlternative(issues));
  const candidates = real.length > 0 ? real : branches;
  const typeMatched = candidates.find((issues) => !issues.some(isTypeMismatch));
  return typeMatched ?? candidates[0]!;
}

/**
 * The branch is for another kind of value altogether: not its type, or a choice among
 * values none of which is of the input's type (a map given where `none | last-modified |
 * {object-name-pattern: ...}` is asked is about the map's fields, not the words).
 */
function isTypeMismatch(issue: z.core.$ZodIssue): boolean {
  if (issue.path.length > 0) return false;
  if (issue.code === 'invalid_type') return true;
  return (
    issue.code === 'invalid_value' &&
    'input' in issue &&
    !issue.values.some((value) => typeof value === typeof issue.input)
  );
}

function isTemplateAlternative(issues: readonly z.core.$ZodIssue[]): boolean {
  return (
    issues.length === 1 &&
    issues[0]!.code === 'invalid_format' &&
    issues[0]!.path.length === 0 &&
    (issues[0] as { pattern?: string }).pattern === TEMPLATE_PATTERN.source
  );
}

function article(expected: string): string {
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    int: 'an integer',
    boolean: 'true or false',
    object: 'a map',
    array: 'a list',
    record: 'a map',
    null: 'nothing',
  };
  return words[expected] ?? expected;
}

function dedupe(details: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  return details.filter((d) => {
    const key = `${d.path}\u0000${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Paths of `__proto__` keys anywhere in a parsed document. zod drops them from what it
 * returns without a word, but the document is stored as written, so they are refused here
 * (the schema refuses the other names every object answers to where names are keys).
 */
function protoKeyPaths(value: unknown, path: PropertyKey[] = []): string[] {
  if (value === null || typeof value !== 'object') return [];
  const found: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') found.push(formatPath([...path, key]));
    else found.push(...protoKeyPaths(item, [...path, Array.isArray(value) ? Number(key) : key]));
  }
  return found;
}
