/**
 * A job's actions applied to NDJSON lines as bytes, for the chains most jobs write:
 * `filter`, `set`, `remove`, `rename` and `keep` on top-level fields, with expressions
 * that read `event.name` fields. Parsing each line whole and serializing it again costs
 * more than reading it (`npm run bench:actions`); here a line's members are found by a scan
 * (inputs/gcs/member-scan.ts), the expressions see only the fields they read, and the
 * line is written again from its members: left out, renamed, or replaced by what `set`
 * computed. The result is the event `chain.ts` gives, as the bytes the input read
 * (numbers and escapes as they were written, like lines without actions).
 *
 * What happens to each field is known from the actions alone, once per job version: the
 * chain is run on *sources* (the line's own member of a name, a value a `set` computed,
 * nothing, or "this one if the line has it, else that one" after a rename onto an existing
 * name), and per line only the expressions run.
 *
 * @example
 *   const lines = compileLineChain(actions, tally, variables); // undefined: use chain.apply on objects
 *   const edits = lines.apply(scan); // scan.emit(edits.plans, edits.extra, edits.extraLength, ...)
 */
import {
  type CelProgram,
  type CelVariables,
  compileCel,
  endEventBudget,
  startEventBudget,
} from '../../../shared/job/actions/cel.ts';
import { type ConcatPart, type FastCel, NOT_HERE } from '../../../shared/job/actions/cel-fast.ts';
import { parseFieldPath } from '../../../shared/job/actions/paths.ts';
import type { Action } from '../../../shared/job/actions/schema.ts';
import { ABSENT, DROP_LINE, LEAVE_OUT, MAX_WANTED } from '../inputs/gcs/member-scan.ts';
import type { RunEvent } from '../types.ts';
import { JsonBytes } from './json-bytes.ts';
import { celToJson } from './to-json.ts';

/** The lines of a scan, one at a time (inputs/gcs/member-scan.ts MemberScan). */
export interface ScannedLines {
  readonly lines: number;
  advance(): boolean;
  /** Whether the current line has a member of wanted name `w`. */
  has(w: number): boolean;
  /** Its value, decoded as JSON.parse would, or ABSENT. */
  value(w: number): unknown;
  /** The line's bytes, which the next two index. */
  readonly bytes: Uint8Array;
  /** Where its value of `w` starts (the opening quote) when it is a string; -1 otherwise. */
  stringStart(w: number): number;
  /** Just past its value of `w` (which it has). */
  valueEnd(w: number): number;
}

/** What `emit` needs: per line three words (see assembly/json-lines.ts emitLines), and the bytes they point into. */
export interface LineEdits {
  plans: Uint32Array;
  extra: Uint8Array;
  extraLength: number;
  /** Lines kept. */
  kept: number;
}

/** How the chain counts and reports (chain.ts owns the counts). */
export interface ChainTally {
  stats(): { events_in: number; events_out: number; dropped: number[]; errors: number[] };
  fail(action: number, field: string | undefined, reason: string): void;
}

export interface LineChain {
  /** The top-level names the actions touch: the scan finds these members. */
  readonly wanted: readonly string[];
  /** Whether members of other names stay (false after `keep`). */
  readonly keepOthers: boolean;
  /** The longest key (`"name"`, UTF-8) a line may be written with. */
  readonly maxKeyLength: number;
  apply(scan: ScannedLines): LineEdits;
}

type Source =
  | { kind: 'absent' }
  | { kind: 'member'; id: number }
  | { kind: 'computed'; slot: number }
  | { kind: 'either'; first: Source; otherwise: Source };

const NOTHING_SOURCE: Source = { kind: 'absent' };

/** `first` when the line has it, else `otherwise`. */
function either(first: Source, otherwise: Source): Source {
  if (first.kind === 'computed' || otherwise.kind === 'absent') return first;
  if (first.kind === 'absent') return otherwise;
  return { kind: 'either', first, otherwise };
}

/** One expression and the fields it reads, with room for their values on a line. */
interface Expression {
  program: CelProgram;
  /** Undefined: the library evaluates it always. */
  fast: FastCel | undefined;
  reads: [string, Source][];
  /** The current line's values of `reads` (undefined: the line has none). */
  fieldValues: unknown[];
  /** Per read: the wanted name when it is the line's own member, else -1. */
  members: Int32Array;
  /** Its parts when it only joins string fields and literals (indexes into `reads`). */
  joins: ConcatPart[] | undefined;
  /**
   * For a `set` that only joins string fields and literals, and whose value no later action
   * reads: the parts, written as bytes (members' text as the line has it, literals' JSON
   * text) when every member is a string, without decoding them.
   */
  concat?: BytePart[];
}

/** A member's string (wanted name), or literal JSON string text without its quotes. */
type BytePart = { member: number } | { text: Buffer };

/** A computed value the line's bytes give (Expression.concat): written when the line is. */
const AS_BYTES: unique symbol = Symbol('as-bytes');

type Step =
  | { kind: 'filter'; index: number; expression: Expression }
  | { kind: 'set'; index: number; sets: { field: string; expression: Expression; slot: number }[] };

/** Undefined when the actions need whole events: other kinds, dotted paths, or `event` used other than by field. */
export function compileLineChain(
  actions: readonly Action[],
  tally: ChainTally,
  variables: CelVariables,
): LineChain | undefined {
  const plan = planActions(actions);
  if (!plan) return undefined;
  const { wanted, steps, finals, keepOthers, slots } = plan;
  const keys = wanted.map((name) => Buffer.from(JSON.stringify(name)));
  const maxKeyLength = Math.max(0, ...keys.map((key) => key.length));
  // `extra` starts with every key (`"name"`), then the decision variants, then a call's appendices.
  const keyOffsets: number[] = [];
  let prefix = 0;
  for (const key of keys) {
    keyOffsets.push(prefix);
    prefix += key.length;
  }
  prefix = (prefix + 3) & ~3;
  // Where each member goes and which computed fields follow depend, after a rename onto a
  // name the line may have, on which of some members the line has: one variant per such
  // combination, made when first met and kept with the keys at the start of `extra`.
  const conditions = [...new Set(finals.flatMap(conditionMembers))];
  if (conditions.length > MAX_CONDITIONS) return undefined;
  const variantsAt = prefix;
  prefix += (1 << conditions.length) * wanted.length * 8;
  // Written in place: a string per line, encoded afterwards, cost more than the rest of a `set`.
  const extra = new JsonBytes(Math.max(64 * 1024, prefix * 4));
  keys.forEach((key, w) => {
    key.copy(extra.bytes, keyOffsets[w]);
  });
  /** Per variant: where its decisions are, and the computed fields that follow (name, slot). */
  const variants: ({ decisions: number; computed: number[] } | undefined)[] = new Array(
    1 << conditions.length,
  );
  const variantOf = (scan: ScannedLines): { decisions: number; computed: number[] } => {
    let mask = 0;
    for (let c = 0; c < conditions.length; c++) if (scan.has(conditions[c]!)) mask |= 1 << c;
    let variant = variants[mask];
    if (variant) return variant;
    const at = variantsAt + mask * wanted.length * 8;
    for (let w = 0; w < wanted.length; w++) {
      extra.bytes.writeUInt32LE(0, at + w * 8);
      extra.bytes.writeUInt32LE(LEAVE_OUT, at + w * 8 + 4);
    }
    const computed: number[] = [];
    for (let f = 0; f < wanted.length; f++) {
      const source = resolve(finals[f]!, scan);
      if (source.kind === 'computed') computed.push(f, source.slot);
      if (source.kind !== 'member') continue;
      extra.bytes.writeUInt32LE(keyOffsets[f]!, at + source.id * 8);
      extra.bytes.writeUInt32LE(keys[f]!.length, at + source.id * 8 + 4);
    }
    variant = { decisions: at, computed };
    variants[mask] = variant;
    return variant;
  };
  const values: unknown[] = new Array(slots);
  /** Per slot: the parts of a `set` written as bytes (Expression.concat). */
  const concatOf: (BytePart[] | undefined)[] = new Array(slots);
  for (const step of steps)
    if (step.kind === 'set') for (const set of step.sets) concatOf[set.slot] = set.expression.concat;
  const appendKeys = wanted.map((name) => Buffer.from(`${JSON.stringify(name)}:`));
  const appendCommaKeys = wanted.map((name) => Buffer.from(`,${JSON.stringify(name)}:`));
  let plans = new Uint32Array(3 * 1024);

  const sourceValue = (source: Source, scan: ScannedLines): unknown => {
    switch (source.kind) {
      case 'member':
        return scan.value(source.id);
      case 'computed':
        return values[source.slot];
      case 'either':
        return sourceValue(hasSource(source.first, scan) ? source.first : source.otherwise, scan);
      default:
        return ABSENT;
    }
  };
  /**
   * An expression's value on the current line: by its fast path (shared/job/actions/cel-fast.ts)
   * from the values alone, else by the library on an event of the fields it reads.
   */
  const evaluate = (expression: Expression, scan: ScannedLines): unknown => {
    const { reads, fieldValues, members } = expression;
    for (let r = 0; r < reads.length; r++) {
      const member = members[r]!;
      const value = member >= 0 ? scan.value(member) : sourceValue(reads[r]![1], scan);
      fieldValues[r] = value === ABSENT ? undefined : value;
    }
    if (expression.fast) {
      try {
        return expression.fast(fieldValues, variables.job, variables.worker);
      } catch (err) {
        if (err !== NOT_HERE) throw err;
      }
    }
    const view: RunEvent = {};
    for (let r = 0; r < reads.length; r++)
      if (fieldValues[r] !== undefined) view[reads[r]![0]] = fieldValues[r];
    variables.event = view;
    try {
      return expression.program(variables);
    } finally {
      variables.event = EMPTY;
    }
  };
  /** Runs the expressions on the current line: whether it is kept. */
  const run = (scan: ScannedLines, stats: ReturnType<ChainTally['stats']>): boolean => {
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s]!;
      if (step.kind === 'filter') {
        let result: unknown;
        try {
          result = evaluate(step.expression, scan);
        } catch (err) {
          stats.errors[step.index]!++;
          tally.fail(step.index, undefined, reasonOf(err));
          return false;
        }
        if (result === true) continue;
        if (result === false) {
          stats.dropped[step.index]!++;
          return false;
        }
        stats.errors[step.index]!++;
        tally.fail(step.index, undefined, `the filter gave ${typeof result}, not true or false`);
        return false;
      }
      for (const set of step.sets) {
        const concat = set.expression.concat;
        if (concat && allStrings(concat, scan)) {
          values[set.slot] = AS_BYTES;
          continue;
        }
        try {
          values[set.slot] = celToJson(evaluate(set.expression, scan));
        } catch (err) {
          stats.errors[step.index]!++;
          tally.fail(step.index, set.field, reasonOf(err));
          return false;
        }
      }
    }
    return true;
  };
  return {
    wanted,
    keepOthers,
    maxKeyLength,
    apply(scan) {
      if (plans.length < scan.lines * 3) plans = new Uint32Array(scan.lines * 3 * 2);
      const stats = tally.stats();
      // Each kept line's appendix (the members `set` computed) follows the previous one.
      extra.length = prefix;
      let k = 0;
      let kept = 0;
      try {
        while (scan.advance()) {
          stats.events_in++;
          // Each line's expressions share one time budget (cel.ts MAX_EVENT_EVALUATION_MS).
          startEventBudget();
          const keep = run(scan, stats);
          if (!keep) {
            plans[k * 3] = DROP_LINE;
            plans[k * 3 + 1] = 0;
            plans[k * 3 + 2] = 0;
            k++;
            continue;
          }
          stats.events_out++;
          kept++;
          const variant = variantOf(scan);
          const at = extra.length;
          const computed = variant.computed;
          for (let c = 0; c < computed.length; c += 2) {
            extra.raw((c ? appendCommaKeys : appendKeys)[computed[c]!]!);
            const value = values[computed[c + 1]!];
            if (value === AS_BYTES) writeJoined(extra, concatOf[computed[c + 1]!]!, scan);
            else extra.json(value);
          }
          plans[k * 3] = at;
          plans[k * 3 + 1] = extra.length - at;
          plans[k * 3 + 2] = variant.decisions;
          k++;
        }
      } finally {
        endEventBudget();
      }
      return { plans, extra: extra.bytes, extraLength: extra.length, kept };
    },
  };
}

/** Whether every member part of `parts` is a string on the current line. */
function allStrings(parts: BytePart[], scan: ScannedLines): boolean {
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    if ('member' in part && scan.stringStart(part.member) < 0) return false;
  }
  return true;
}

/** `"..."`: the parts' text joined, each member's as the line wrote it (escapes kept). */
function writeJoined(out: JsonBytes, parts: BytePart[], scan: ScannedLines): void {
  const bytes = scan.bytes;
  out.raw(QUOTE);
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    if ('member' in part) {
      out.raw(bytes, scan.stringStart(part.member) + 1, scan.valueEnd(part.member) - 1);
    } else out.raw(part.text);
  }
  out.raw(QUOTE);
}

const QUOTE = Buffer.from('"');

/** Most members a rename's outcome (each doubles the decision variants). */
const MAX_CONDITIONS = 6;

// Holds no event between lines.
const EMPTY: RunEvent = Object.freeze({}) as RunEvent;

/** The members whose presence decides what `source` is on a line. */
function conditionMembers(source: Source): number[] {
  if (source.kind !== 'either') return [];
  return [
    ...membersOf(source.first),
    ...conditionMembers(source.first),
    ...conditionMembers(source.otherwise),
  ];
}

function membersOf(source: Source): number[] {
  if (source.kind === 'member') return [source.id];
  if (source.kind === 'either') return [...membersOf(source.first), ...membersOf(source.otherwise)];
  return [];
}

function hasSource(source: Source, scan: ScannedLines): boolean {
  switch (source.kind) {
    case 'member':
      return scan.has(source.id);
    case 'computed':
      return true;
    case 'either':
      return hasSource(source.first, scan) || hasSource(source.otherwise, scan);
    default:
      return false;
  }
}

/** The source a field has on the current line: never `either`. */
function resolve(source: Source, scan: ScannedLines): Source {
  if (source.kind !== 'either') return source;
  return hasSource(source.first, scan) ? resolve(source.first, scan) : resolve(source.otherwise, scan);
}

export function reasonOf(err: unknown): string {
  const error = err as { code?: unknown; node?: CelNode; summary?: string; message?: string };
  if (typeof error.code === 'string' && Object.hasOwn(QUOTES_VALUES, error.code) && !keyFromSource(error))
    return QUOTES_VALUES[error.code]!;
  return error.summary ?? error.message ?? String(err);
}

interface CelNode {
  op?: string;
  args?: unknown;
}

/**
 * A missing key written in the expression itself (`event.user`, `event["user"]`) is the
 * job's own text and worth naming; one computed from the event (`event[event.msg]`) is not.
 */
function keyFromSource(error: { code?: unknown; node?: CelNode }): boolean {
  if (error.code !== 'no_such_key' || !error.node) return false;
  const { op, args } = error.node;
  if (op === '.') return true;
  return op === '[]' && Array.isArray(args) && (args[1] as CelNode | undefined)?.op === 'value';
}

/**
 * CEL evaluation errors whose message quotes a value the event held (`No such key: <it>`,
 * `Invalid duration string: <it>`), said without it: reasons go into `job-errors`, which
 * never carry what a job read. The other CEL messages name types and operators only.
 * Relies on cel-js errors' `code` and `node` (@marcbachmann/cel-js lib/errors.js).
 */
const QUOTES_VALUES: Record<string, string> = {
  no_such_key: 'no such key',
  invalid_duration: 'invalid duration string',
  invalid_regular_expression: 'invalid regular expression',
  numeric_overflow: 'integer overflow',
};

interface LinePlan {
  wanted: string[];
  steps: Step[];
  /** Each wanted name's source after the last action. */
  finals: Source[];
  keepOthers: boolean;
  slots: number;
}

/** Runs the actions on sources; undefined when lines cannot take them. */
function planActions(actions: readonly Action[]): LinePlan | undefined {
  const wanted: string[] = [];
  const idOf = new Map<string, number>();
  const want = (name: string) => {
    if (!idOf.has(name)) {
      idOf.set(name, wanted.length);
      wanted.push(name);
    }
  };
  const topLevel = (path: string) => parseFieldPath(path).length === 1;
  const programs = new Map<
    string,
    { program: CelProgram; fast: FastCel | undefined; concat: ConcatPart[] | undefined; fields: string[] }
  >();
  const compile = (source: string) => {
    const compiled = compileCel(source);
    if (!compiled.ok || !compiled.eventFields) return false;
    programs.set(source, {
      program: compiled.program,
      fast: compiled.fast,
      concat: compiled.concat,
      fields: compiled.eventFields,
    });
    for (const field of compiled.eventFields) want(field);
    return true;
  };
  for (const action of actions) {
    if (action.filter !== undefined) {
      if (!compile(action.filter)) return undefined;
    } else if (action.set !== undefined) {
      for (const [field, source] of Object.entries(action.set)) {
        if (!topLevel(field) || !compile(source)) return undefined;
        want(field);
      }
    } else if (action.remove !== undefined || action.keep !== undefined) {
      for (const field of action.remove ?? action.keep ?? []) {
        if (!topLevel(field)) return undefined;
        want(field);
      }
    } else if (action.rename !== undefined) {
      for (const [from, to] of Object.entries(action.rename)) {
        if (!topLevel(from) || !topLevel(to)) return undefined;
        want(from);
        want(to);
      }
    } else return undefined;
  }
  if (wanted.length > MAX_WANTED || wanted.includes('__proto__')) return undefined;

  const state = new Map<string, Source>();
  let keepOthers = true;
  let slots = 0;
  const lookup = (name: string): Source =>
    state.get(name) ?? (keepOthers ? { kind: 'member', id: idOf.get(name)! } : NOTHING_SOURCE);
  const expressionOf = (source: string): Expression => {
    const { program, fast, concat, fields } = programs.get(source)!;
    const reads = fields.map((field): [string, Source] => [field, lookup(field)]);
    const members = Int32Array.from(reads, ([, read]) => (read.kind === 'member' ? read.id : -1));
    return { program, fast, joins: concat, reads, fieldValues: new Array(reads.length), members };
  };
  const steps: Step[] = [];
  actions.forEach((action, index) => {
    if (action.filter !== undefined) {
      steps.push({ kind: 'filter', index, expression: expressionOf(action.filter) });
    } else if (action.set !== undefined) {
      // Every expression of one `set` reads the event as it was before the action.
      const sets = Object.entries(action.set).map(([field, source]) => ({
        field,
        expression: expressionOf(source),
        slot: slots++,
      }));
      steps.push({ kind: 'set', index, sets });
      for (const set of sets) state.set(set.field, { kind: 'computed', slot: set.slot });
    } else if (action.remove !== undefined) {
      for (const field of action.remove) state.set(field, NOTHING_SOURCE);
    } else if (action.rename !== undefined) {
      for (const [from, to] of Object.entries(action.rename)) {
        if (from === to) continue;
        const moved = lookup(from);
        if (moved.kind === 'absent') continue;
        state.set(to, either(moved, lookup(to)));
        state.set(from, NOTHING_SOURCE);
      }
    } else if (action.keep !== undefined) {
      const kept = new Map(action.keep.map((field) => [field, lookup(field)]));
      state.clear();
      for (const [field, source] of kept) state.set(field, source);
      keepOthers = false;
    }
  });
  writeAsBytes(steps);
  return { wanted, steps, finals: wanted.map(lookup), keepOthers, slots };
}

/**
 * Gives `concat` parts to each `set` expression that joins string members and literals
 * (read straight from the line) and whose value no later expression reads: such a value
 * is only ever written, so it can stay bytes.
 */
function writeAsBytes(steps: Step[]): void {
  const readSlots = new Set<number>();
  const collect = (source: Source): void => {
    if (source.kind === 'computed') readSlots.add(source.slot);
    else if (source.kind === 'either') {
      collect(source.first);
      collect(source.otherwise);
    }
  };
  for (const step of steps) {
    const expressions = step.kind === 'filter' ? [step.expression] : step.sets.map((set) => set.expression);
    for (const expression of expressions) for (const [, source] of expression.reads) collect(source);
  }
  for (const step of steps) {
    if (step.kind !== 'set') continue;
    for (const set of step.sets) {
      const parts = set.expression.joins;
      if (!parts || readSlots.has(set.slot)) continue;
      const reads = set.expression.reads;
      if (parts.some((part) => 'field' in part && reads[part.field]![1].kind !== 'member')) continue;
      set.expression.concat = parts.map((part): BytePart => {
        if ('text' in part) return { text: Buffer.from(JSON.stringify(part.text).slice(1, -1)) };
        const source = reads[part.field]![1] as { kind: 'member'; id: number };
        return { member: source.id };
      });
    }
  }
}
