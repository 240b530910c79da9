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
import { type CelProgram, type CelVariables, compileCel } from '../../../shared/job/actions/cel.ts';
import { parseFieldPath } from '../../../shared/job/actions/paths.ts';
import type { Action } from '../../../shared/job/actions/schema.ts';
import { ABSENT, DROP_LINE, LEAVE_OUT, MAX_WANTED } from '../inputs/gcs/member-scan.ts';
import type { RunEvent } from '../types.ts';
import { celToJson } from './to-json.ts';

/** The lines of a scan, one at a time (inputs/gcs/member-scan.ts MemberScan). */
export interface ScannedLines {
  readonly lines: number;
  advance(): boolean;
  /** Whether the current line has a member of wanted name `w`. */
  has(w: number): boolean;
  /** Its value, decoded as JSON.parse would, or ABSENT. */
  value(w: number): unknown;
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

type Step =
  | { kind: 'filter'; index: number; program: CelProgram; reads: [string, Source][] }
  | {
      kind: 'set';
      index: number;
      reads: [string, Source][];
      sets: { field: string; program: CelProgram; slot: number }[];
    };

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
  let extra = Buffer.alloc(Math.max(64 * 1024, prefix * 4));
  const room = (bytes: number) => {
    if (bytes <= extra.length) return;
    const grown = Buffer.alloc(Math.max(extra.length * 2, bytes));
    extra.copy(grown);
    extra = grown;
  };
  keys.forEach((key, w) => {
    key.copy(extra, keyOffsets[w]);
  });
  /** Per variant: where its decisions are, and the computed fields that follow (name, slot). */
  const variants = new Map<number, { decisions: number; computed: number[] }>();
  const variantOf = (scan: ScannedLines): { decisions: number; computed: number[] } => {
    let mask = 0;
    for (let c = 0; c < conditions.length; c++) if (scan.has(conditions[c]!)) mask |= 1 << c;
    let variant = variants.get(mask);
    if (variant) return variant;
    const at = variantsAt + mask * wanted.length * 8;
    for (let w = 0; w < wanted.length; w++) {
      extra.writeUInt32LE(0, at + w * 8);
      extra.writeUInt32LE(LEAVE_OUT, at + w * 8 + 4);
    }
    const computed: number[] = [];
    for (let f = 0; f < wanted.length; f++) {
      const source = resolve(finals[f]!, scan);
      if (source.kind === 'computed') computed.push(f, source.slot);
      if (source.kind !== 'member') continue;
      extra.writeUInt32LE(keyOffsets[f]!, at + source.id * 8);
      extra.writeUInt32LE(keys[f]!.length, at + source.id * 8 + 4);
    }
    variant = { decisions: at, computed };
    variants.set(mask, variant);
    return variant;
  };
  const values: unknown[] = new Array(slots);
  const appendKeys = wanted.map((name) => `${JSON.stringify(name)}:`);
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
  const viewOf = (reads: [string, Source][], scan: ScannedLines): RunEvent => {
    const view: RunEvent = {};
    for (let r = 0; r < reads.length; r++) {
      const read = reads[r]!;
      const value = sourceValue(read[1], scan);
      if (value !== ABSENT) view[read[0]] = value;
    }
    return view;
  };
  /** Runs the expressions on the current line: whether it is kept. */
  const run = (scan: ScannedLines, stats: ReturnType<ChainTally['stats']>): boolean => {
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s]!;
      variables.event = viewOf(step.reads, scan);
      if (step.kind === 'filter') {
        let result: unknown;
        try {
          result = step.program(variables);
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
        try {
          values[set.slot] = celToJson(set.program(variables));
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
      // The appendices of all lines as one string, written once (a write per line costs
      // more than the line's own work); `plans` hold their offsets in it until then.
      let appendices = '';
      let k = 0;
      let kept = 0;
      while (scan.advance()) {
        stats.events_in++;
        const keep = run(scan, stats);
        variables.event = EMPTY;
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
        const at = appendices.length;
        const computed = variant.computed;
        for (let c = 0; c < computed.length; c += 2) {
          if (c) appendices += ',';
          appendices += appendKeys[computed[c]!]!;
          appendices += jsonText(values[computed[c + 1]!]);
        }
        plans[k * 3] = at;
        plans[k * 3 + 1] = appendices.length - at;
        plans[k * 3 + 2] = variant.decisions;
        k++;
      }
      room(prefix + appendices.length * 3);
      const written = extra.write(appendices, prefix);
      if (written === appendices.length) {
        // ASCII: characters are bytes, so the offsets hold; they only move past the prefix.
        for (let p = 0; p < k; p++) if (plans[p * 3] !== DROP_LINE) plans[p * 3]! += prefix;
      } else {
        // Some text is not ASCII: each appendix's bytes, one by one.
        const text = appendices;
        let at = prefix;
        for (let p = 0; p < k; p++) {
          if (plans[p * 3] === DROP_LINE) continue;
          const start = plans[p * 3]!;
          const bytes = extra.write(text.slice(start, start + plans[p * 3 + 1]!), at);
          plans[p * 3] = at;
          plans[p * 3 + 1] = bytes;
          at += bytes;
        }
      }
      const length = prefix + written;
      return { plans, extra, extraLength: length, kept };
    },
  };
}

/** A JSON value's text (numbers without JSON.stringify's detour). */
function jsonText(value: unknown): string {
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** Most members a rename's outcome may depend on (each doubles the decision variants). */
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
  const error = err as { summary?: string; message?: string };
  return error.summary ?? error.message ?? String(err);
}

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
  const programs = new Map<string, { program: CelProgram; fields: string[] }>();
  const compile = (source: string) => {
    const compiled = compileCel(source);
    if (!compiled.ok || !compiled.eventFields) return false;
    programs.set(source, { program: compiled.program, fields: compiled.eventFields });
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
  const readsOf = (fields: string[]): [string, Source][] => fields.map((field) => [field, lookup(field)]);
  const steps: Step[] = [];
  actions.forEach((action, index) => {
    if (action.filter !== undefined) {
      const { program, fields } = programs.get(action.filter)!;
      steps.push({ kind: 'filter', index, program, reads: readsOf(fields) });
    } else if (action.set !== undefined) {
      const entries = Object.entries(action.set);
      const fields = [...new Set(entries.flatMap(([, source]) => programs.get(source)!.fields))];
      const sets = entries.map(([field, source]) => ({
        field,
        program: programs.get(source)!.program,
        slot: slots++,
      }));
      steps.push({ kind: 'set', index, reads: readsOf(fields), sets });
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
  return { wanted, steps, finals: wanted.map(lookup), keepOthers, slots };
}
