/**
 * A job's `actions`, compiled once per job version into one function applied to each
 * event: CEL programs are parsed and checked here (never per event), field paths split,
 * timestamp formats compiled. Applying the chain changes the event object in place (it
 * is the input's freshly parsed object, and becomes the output's), and allocates only
 * what the actions add to it.
 *
 * An evaluation error in any action drops the event and is counted, with the action's
 * index and field, for `job-metrics` and `job-errors`.
 *
 * @example
 *   const chain = compileActionChain(definition.actions, { onError: (f) => report(f) });
 *   chain.bind({ job: 'j', worker: 'w' });
 *   const out = chain.apply(event); // undefined: dropped
 */
import {
  type CelProgram,
  type CelVariables,
  compileCel,
  endEventBudget,
  startEventBudget,
} from '../../../shared/job/actions/cel.ts';
import { NOT_HERE } from '../../../shared/job/actions/cel-fast.ts';
import { deletePath, getPath, parseFieldPath, setPath } from '../../../shared/job/actions/paths.ts';
import type { Action } from '../../../shared/job/actions/schema.ts';
import { compileTimestampFormat } from '../../../shared/job/actions/strftime.ts';
import type { RunEvent } from '../types.ts';
import { compileLineChain, type LineChain, reasonOf } from './line-chain.ts';
import { celToJson } from './to-json.ts';

export interface ActionFailure {
  /** 0-based index of the action in `actions`. */
  action: number;
  kind: string;
  /** The field the action was working on, when it has one. */
  field?: string;
  reason: string;
}

export interface ActionStats {
  events_in: number;
  events_out: number;
  /** Events each action dropped (filters), by index; 0 for other kinds. */
  dropped: number[];
  /** Evaluation errors (each dropped its event), by action index. */
  errors: number[];
}

export interface ActionChain {
  /** Sets `job` and `worker` for the expressions. */
  bind(names: { job: string; worker: string }): void;
  /** The event after every action, or undefined when it was dropped. */
  apply(event: RunEvent): RunEvent | undefined;
  /** Counts since the last call, which resets them. */
  takeStats(): ActionStats;
  /**
   * What a copy of this chain did elsewhere (a read thread, runner/cores/): its counts
   * join this chain's, its evaluation errors are reported as this chain's.
   */
  absorb(stats: ActionStats | undefined, failures: readonly ActionFailure[]): void;
  /** The actions it was compiled from (a read thread compiles its own copy). */
  readonly actions: readonly Action[];
  /**
   * The same actions for NDJSON lines as bytes (line-chain.ts), counted and reported with
   * `apply`'s; undefined when they need whole events.
   */
  readonly lines: LineChain | undefined;
}

/** Returned by a step that drops the event. */
const DROP = Symbol('drop');

type Step = (event: RunEvent) => RunEvent | typeof DROP;

class StepError extends Error {
  constructor(
    readonly field: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export function compileActionChain(
  actions: readonly Action[],
  options: { onError?: (failure: ActionFailure) => void } = {},
): ActionChain {
  const variables: CelVariables = { event: {}, job: '', worker: '' };
  const steps: Step[] = [];
  const kinds: string[] = [];
  for (const action of actions) {
    const [kind, spec] = Object.entries(action).find(([, v]) => v !== undefined)!;
    kinds.push(kind);
    steps.push(compileStep(kind, spec, variables));
  }
  const newStats = (): ActionStats => ({
    events_in: 0,
    events_out: 0,
    dropped: steps.map(() => 0),
    errors: steps.map(() => 0),
  });
  let stats = newStats();
  const lines = compileLineChain(
    actions,
    {
      stats: () => stats,
      fail: (action, field, reason) =>
        options.onError?.({
          action,
          kind: kinds[action]!,
          ...(field !== undefined ? { field } : {}),
          reason,
        }),
    },
    variables,
  );
  return {
    lines,
    actions,
    absorb(more, failures) {
      if (more) {
        stats.events_in += more.events_in;
        stats.events_out += more.events_out;
        for (let i = 0; i < steps.length; i++) {
          stats.dropped[i]! += more.dropped[i] ?? 0;
          stats.errors[i]! += more.errors[i] ?? 0;
        }
      }
      for (const failure of failures) options.onError?.(failure);
    },
    bind({ job, worker }) {
      variables.job = job;
      variables.worker = worker;
    },
    apply(event) {
      stats.events_in++;
      let current = event;
      let i = 0;
      // The event's expressions share one time budget (cel.ts MAX_EVENT_EVALUATION_MS).
      startEventBudget();
      try {
        for (; i < steps.length; i++) {
          const next = steps[i]!(current);
          if (next === DROP) {
            stats.dropped[i]!++;
            return undefined;
          }
          current = next;
        }
      } catch (err) {
        stats.errors[i]!++;
        options.onError?.({
          action: i,
          kind: kinds[i]!,
          ...(err instanceof StepError && err.field !== undefined ? { field: err.field } : {}),
          reason: reasonOf(err),
        });
        return undefined;
      } finally {
        variables.event = EMPTY;
        endEventBudget();
      }
      stats.events_out++;
      return current;
    },
    takeStats() {
      const taken = stats;
      stats = newStats();
      return taken;
    },
  };
}

// Holds no event between calls, so a chain never keeps the last event alive.
const EMPTY: RunEvent = Object.freeze({}) as RunEvent;

function compileStep(kind: string, spec: unknown, variables: CelVariables): Step {
  switch (kind) {
    case 'filter': {
      const program = programOf(spec as string);
      return (event) => {
        variables.event = event;
        const result = program(variables);
        if (result === true) return event;
        if (result === false) return DROP;
        throw new StepError(undefined, `the filter gave ${typeof result}, not true or false`);
      };
    }
    case 'set': {
      const entries = Object.entries(spec as Record<string, string>);
      const paths = entries.map(([field]) => parseFieldPath(field));
      const names = entries.map(([field]) => field);
      const programs = entries.map(([, source]) => programOf(source));
      // Reused for every event: all expressions see the event as it was before this action.
      const values: unknown[] = new Array(entries.length);
      return (event) => {
        variables.event = event;
        for (let k = 0; k < programs.length; k++) {
          try {
            values[k] = celToJson(programs[k]!(variables));
          } catch (err) {
            throw new StepError(names[k], reasonOf(err));
          }
        }
        for (let k = 0; k < paths.length; k++) {
          const path = paths[k]!;
          if (path.length === 1) event[path[0]!] = values[k];
          else {
            try {
              setPath(event, path, values[k]);
            } catch (err) {
              throw new StepError(names[k], reasonOf(err));
            }
          }
          values[k] = undefined;
        }
        return event;
      };
    }
    case 'remove': {
      const paths = (spec as string[]).map(parseFieldPath);
      if (paths.every((p) => p.length === 1)) return reshape(new Set(paths.map((p) => p[0]!)), new Map());
      return (event) => {
        for (const path of paths) {
          if (path.length === 1) {
            if (Object.hasOwn(event, path[0]!)) delete event[path[0]!];
          } else deletePath(event, path);
        }
        return event;
      };
    }
    case 'rename': {
      const pairs = Object.entries(spec as Record<string, string>).map(
        ([from, to]) => [parseFieldPath(from), parseFieldPath(to), to] as const,
      );
      if (pairs.every(([from, to]) => from.length === 1 && to.length === 1)) {
        const renames = new Map(pairs.map(([from, to]) => [from[0]!, to[0]!]));
        // Sequential renames (a: b, b: c) and two into one are not one copy; in place handles them.
        const targets = [...renames.values()];
        if (new Set(targets).size === targets.length && !targets.some((to) => renames.has(to)))
          return reshape(new Set(), renames);
      }
      return (event) => {
        for (const [from, to, name] of pairs) {
          if (from.length === 1 && to.length === 1) {
            const key = from[0]!;
            if (!Object.hasOwn(event, key)) continue;
            const value = event[key];
            delete event[key];
            event[to[0]!] = value;
            continue;
          }
          const value = getPath(event, from);
          if (value === undefined) continue;
          deletePath(event, from);
          try {
            setPath(event, to, value);
          } catch (err) {
            throw new StepError(name, reasonOf(err));
          }
        }
        return event;
      };
    }
    case 'keep': {
      const paths = (spec as string[]).map(parseFieldPath);
      return (event) => {
        const kept: RunEvent = {};
        for (const path of paths) {
          if (path.length === 1) {
            if (Object.hasOwn(event, path[0]!)) kept[path[0]!] = event[path[0]!];
            continue;
          }
          const value = getPath(event, path);
          if (value !== undefined) setPath(kept, path, value);
        }
        return kept;
      };
    }
    case 'parse-json': {
      const field = spec as string;
      const path = parseFieldPath(field);
      return (event) => {
        const text = getPath(event, path);
        if (typeof text !== 'string') return event;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          throw new StepError(field, 'the field does not hold JSON text');
        }
        setPath(event, path, value);
        return event;
      };
    }
    case 'parse-timestamp': {
      const { field, format } = spec as { field: string; format: string };
      const path = parseFieldPath(field);
      const parse = compileTimestampFormat(format);
      return (event) => {
        const text = getPath(event, path);
        if (text === undefined) return event;
        if (typeof text !== 'string') throw new StepError(field, `the field holds ${kindOf(text)}, not text`);
        const time = parse(text);
        if (!time || Number.isNaN(time.getTime()))
          throw new StepError(field, `the field's text does not match the format ${format}`);
        setPath(event, path, time.toISOString());
        return event;
      };
    }
    default:
      throw new Error(`unknown action kind ${kind}`);
  }
}

/**
 * Top-level removes and renames as one copy into a new object: `delete` would turn the
 * event into a slow dictionary-mode object, which every later action and the output pay for.
 */
function reshape(removed: ReadonlySet<string>, renames: ReadonlyMap<string, string>): Step {
  // One lookup per key: undefined copies it, DROP_KEY drops it, a string renames it, and
  // { source } drops a field that a rename of `source` (when present) replaces.
  const plan: Record<string, string | { source: string }> = Object.create(null);
  for (const [from, to] of renames) if (from !== to) plan[to] = { source: from };
  for (const [from, to] of renames) plan[from] = to;
  for (const key of removed) plan[key] = DROP_KEY;
  return (event) => {
    const out: RunEvent = {};
    for (const key in event) {
      const decision = plan[key];
      let to = key;
      if (decision !== undefined) {
        if (decision === DROP_KEY) continue;
        if (typeof decision === 'string') to = decision;
        else if (Object.hasOwn(event, decision.source)) continue;
      }
      if (to === '__proto__') defineOwn(out, to, event[key]);
      else out[to] = event[key];
    }
    return out;
  };
}

const DROP_KEY = '';

/** An own `__proto__` field (JSON.parse makes them) stays a field, never an object's prototype. */
export function defineOwn(target: RunEvent, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function programOf(source: string): CelProgram {
  const compiled = compileCel(source);
  // Validation already refused these; a definition that skipped it still fails here, once.
  if (!compiled.ok) throw new Error(`${compiled.message} in ${JSON.stringify(source)}`);
  const { program, fast, eventFields } = compiled;
  if (!fast || !eventFields) return program;
  // The fast path (shared/job/actions/cel-fast.ts) on the fields it reads; the library where it steps aside.
  const values: unknown[] = new Array(eventFields.length);
  return (variables) => {
    const event = variables.event;
    for (let f = 0; f < eventFields.length; f++)
      values[f] = Object.hasOwn(event, eventFields[f]!) ? event[eventFields[f]!] : undefined;
    try {
      return fast(values, variables.job, variables.worker);
    } catch (err) {
      if (err !== NOT_HERE) throw err;
    }
    return program(variables);
  };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}
