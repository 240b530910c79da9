/**
 * CEL expressions of `actions` (the Common Expression Language of IAM conditions and
 * Eventarc filters), compiled and type-checked once, with the variables `event` (a map),
 * `job` and `worker` (strings). Evaluation is bounded: CEL has no loops beyond its macros
 * over existing lists, the parser's limits cap the expression's size, macros may nest two
 * deep and take MAX_MACRO_STEPS steps, and one event's expressions MAX_EVENT_EVALUATION_MS.
 *
 * `matches` runs on RE2 (re2js, linear time), not on JavaScript's backtracking RegExp:
 * one worker runs many tenants' jobs, and a pattern such as `(a+)+$` must not stall it.
 * Its pattern must therefore be a string literal, compiled when the job is validated.
 *
 * @example
 *   const compiled = compileCel('event.status >= 500 && job == "api"');
 *   if (compiled.ok) compiled.program({ event, job: 'api', worker: 'w1' }); // true
 */
import { Environment } from '@marcbachmann/cel-js';
import { compileSafeRegex, type SafeRegex } from '../../regex.ts';
import { type ConcatPart, compileFastCel, type FastCel, stringConcatParts } from './cel-fast.ts';

export interface CelVariables {
  event: Record<string, unknown>;
  job: string;
  worker: string;
}

export type CelProgram = (variables: CelVariables) => unknown;

export type CelCompiled =
  | {
      ok: true;
      program: CelProgram;
      type: string;
      /**
       * The top-level fields of `event` the expression reads (`event.name`, `event["name"]`,
       * optional forms too); undefined when it uses `event` in any other way (`size(event)`,
       * `"a" in event`, a macro variable named `event`), so that it may read any field.
       */
      eventFields: string[] | undefined;
      /**
       * The expression as closures over `eventFields`' values (cel-fast.ts), for callers that
       * hold the fields rather than an event; undefined when it needs the library throughout.
       */
      fast: FastCel | undefined;
      /** Its parts when it only joins string fields and literals (cel-fast.ts stringConcatParts). */
      concat: ConcatPart[] | undefined;
    }
  | { ok: false; message: string /** 0-based offset in the expression. */; offset: number };

/** Parse-time limits: a job's expression is a line or a few, never a program. */
const LIMITS = {
  maxAstNodes: 2000,
  maxDepth: 64,
  maxListElements: 1000,
  maxMapEntries: 1000,
  maxCallArguments: 32,
};

let environment: Environment | undefined;

function env(): Environment {
  environment ??= new Environment({ enableOptionalTypes: true, limits: LIMITS })
    .registerVariable('event', 'map')
    .registerVariable('job', 'string')
    .registerVariable('worker', 'string');
  return environment;
}

const SECRET_REF = /\$\{secret\|/;

export function compileCel(source: string): CelCompiled {
  const secret = SECRET_REF.exec(source);
  if (secret) {
    return {
      ok: false,
      offset: secret.index,
      message: '$' + '{secret|...} is not allowed in an expression: secrets must not flow into events',
    };
  }
  let program: ReturnType<Environment['parse']>;
  try {
    program = env().parse(source);
  } catch (err) {
    return problem(err, 'syntax');
  }
  const checked = program.check();
  if (!checked.valid) return problem(checked.error, 'type');
  const nested = tooDeepComprehension(program.ast as unknown as AstNode);
  if (nested) return nested;
  const regexProblem = useRe2ForMatches(program.ast as unknown as AstNode);
  if (regexProblem) return regexProblem;
  const eventFields = eventFieldsRead(program.ast as unknown as AstNode);
  return {
    ok: true,
    program: metered(program as CelProgram, program.ast as unknown as AstNode),
    type: checked.type ?? 'dyn',
    eventFields,
    fast: eventFields && compileFastCel(program.ast, eventFields),
    concat: eventFields && stringConcatParts(program.ast, eventFields),
  };
}

function problem(err: unknown, what: 'syntax' | 'type'): CelCompiled {
  const error = err as { summary?: string; message?: string; range?: { start?: number } };
  const summary = error.summary ?? String(error.message ?? err).split('\n')[0]!;
  return { ok: false, message: `CEL ${what} error: ${summary}`, offset: error.range?.start ?? 0 };
}

interface AstNode {
  op: string;
  args: unknown;
  start: number;
  evaluate: (ev: Evaluator, ast: AstNode, ctx: unknown) => unknown;
  /** cel-js's own: a macro call's expansion is its `alternate` (a `comprehension` node). */
  meta?: { alternate?: AstNode; macro?: { evaluate: AstNode['evaluate'] }; evaluate?: AstNode['evaluate'] };
}

interface Evaluator {
  run(ast: AstNode, ctx: unknown): unknown;
}

/**
 * Replaces the evaluation of every `matches` call with an RE2 match of its literal
 * pattern, compiled here once (a library's node evaluates through its own `evaluate`,
 * which the parser itself reassigns the same way).
 */
function useRe2ForMatches(root: AstNode): CelCompiled | undefined {
  let problem: CelCompiled | undefined;
  walk(root, (node) => {
    if (problem) return false;
    if (
      (node.op === 'rcall' || node.op === 'call') &&
      Array.isArray(node.args) &&
      node.args[0] === 'matches'
    ) {
      const [subject, pattern] =
        node.op === 'rcall'
          ? [node.args[1] as AstNode, (node.args[2] as AstNode[])[0]]
          : [(node.args[1] as AstNode[])[0], (node.args[1] as AstNode[])[1]];
      if (!subject || !pattern || pattern.op !== 'value' || typeof pattern.args !== 'string') {
        problem = {
          ok: false,
          offset: node.start,
          message:
            'matches takes its pattern as a string literal (RE2 syntax), e.g. event.path.matches("^/v1/")',
        };
        return false;
      }
      let re: SafeRegex;
      try {
        re = compileSafeRegex(pattern.args);
      } catch (err) {
        problem = { ok: false, offset: pattern.start, message: (err as Error).message };
        return false;
      }
      node.evaluate = (ev, _ast, ctx) => {
        const text = ev.run(subject, ctx);
        if (typeof text !== 'string') throw new Error(`matches needs a string, got ${typeof text}`);
        // RE2 in JavaScript takes up to tens of ns a character: counted as such (CLOCK_EVERY).
        charge(text.length >>> 6);
        return re.test(text);
      };
    }
    return true;
  });
  return problem;
}

/**
 * Steps of list macros one evaluation may take: nesting is capped at two levels, but two
 * levels over an event's list of 100,000 items are still 10^10 steps, and a runner deaf to
 * everything (SIGTERM included) while one event is evaluated. 10^6 plain steps take about
 * 0.1 s, but a step may scan a long string (`xs.exists(x, event.s.contains("zq"))` over a
 * 4 MiB `s` took 52 s for 10^6 steps): MAX_EVENT_EVALUATION_MS bounds the time as well.
 */
export const MAX_MACRO_STEPS = 1_000_000;

/**
 * Time the expressions of one event's actions may take together: past it, the event fails
 * with an evaluation error (as past MAX_MACRO_STEPS), so that one crafted event holds a
 * core for about this long, never for minutes, deaf to a stop and to other runs (an object
 * read alone is read on the main thread). Well above what MAX_MACRO_STEPS plain steps take
 * (0.1 s, 0.4 s on a loaded core, more with the test suite on both cores), so that the step
 * limit keeps its meaning and an event within it is not failed by a busy machine.
 */
export const MAX_EVENT_EVALUATION_MS = 2000;

/**
 * Units of work between two looks at the clock (a look costs about 50 ns). A macro's step,
 * a call (`contains`, `lowerAscii`, ...), a `+` and a read of a field or a macro's variable
 * are one unit each (30-300 ns), and one more per KiB of a string or per 64 items of a list
 * they give: the operations on it (`contains`, `matches`, `==`, `lowerAscii`, ...) then
 * scan it in proportion, 10-1,000 ns a KiB (`matches` adds one per 64 characters, for RE2
 * in JavaScript). Comparisons, `&&`, `||`, `!`, arithmetic and literals are not metered:
 * what they work on was. So the clock is read every 0.03-1 ms of work, and never by an
 * evaluation that does less (the time counts from the first look: what came before it is
 * less than one interval).
 */
const CLOCK_EVERY = 1024;

/** What is metered: what may give a long string or list (MAX_EVENT_EVALUATION_MS). */
const METERED_OPS = new Set(['.', '.?', '[]', '[?]', 'id', 'rcall', 'call', '+']);
/** Variables of the environment: `event` a map, `job` and `worker` short strings. */
const VARIABLES = new Set(['event', 'job', 'worker']);

/**
 * The work and time of the evaluation under way, or of the event whose actions are
 * evaluated (startEventBudget): module-wide, as evaluations are synchronous and an event's
 * expressions share one budget. `deadline` is 0 until the first look at the clock.
 */
const meter = { work: 0, checkAt: CLOCK_EVERY, deadline: 0, over: false, inEvent: false };

function resetMeter(): void {
  meter.work = 0;
  meter.checkAt = CLOCK_EVERY;
  meter.deadline = 0;
  meter.over = false;
}

/**
 * The expressions evaluated until endEventBudget share one MAX_EVENT_EVALUATION_MS (one
 * event's actions, functions/runner/actions). Without it each evaluation has its own.
 */
export function startEventBudget(): void {
  meter.inEvent = true;
  resetMeter();
}

export function endEventBudget(): void {
  meter.inEvent = false;
}

// One error, thrown by every node past the budget: `exists`, `all`, `||` and `&&` go on
// after an error, and building one per remaining element would cost more than they do.
const outOfTime = new Error(
  `the event's expressions took more than ${MAX_EVENT_EVALUATION_MS} ms (the time one event's actions may take)`,
);

function lookAtClock(): void {
  if (meter.over) throw outOfTime;
  const now = performance.now();
  if (meter.deadline === 0) meter.deadline = now + MAX_EVENT_EVALUATION_MS;
  else if (now > meter.deadline) {
    meter.over = true;
    // Every later metered node looks again, and throws at once.
    meter.checkAt = -1;
    throw outOfTime;
  }
  meter.checkAt = meter.work + CLOCK_EVERY;
}

/** Work done outside the nodes' own accounting (an RE2 scan). */
function charge(units: number): void {
  meter.work += units;
}

/**
 * Meters the nodes of `root` that may give long values (above): counts their work and
 * looks at the clock every CLOCK_EVERY units, failing the evaluation past
 * MAX_EVENT_EVALUATION_MS; and counts the steps of every list macro (each element a macro
 * visits is one, at any level), failing the evaluation that takes more than MAX_MACRO_STEPS.
 */
function metered(program: CelProgram, root: AstNode): CelProgram {
  const steps = comprehensionSteps(root);
  let taken = 0;
  // As `outOfTime`: thrown by every step past the budget.
  const exhausted = new Error(
    `the expression took more than ${MAX_MACRO_STEPS.toLocaleString('en-US')} steps of list macros on this event (map, filter, all, exists, exists_one: one step per element, at every level)`,
  );
  let any = false;
  walk(
    root,
    (node) => {
      const step = steps.get(node);
      if (step === undefined && !METERED_OPS.has(node.op)) return true;
      if (node.op === 'id' && VARIABLES.has(node.args as string)) return true;
      any = true;
      // The node's own evaluate takes no `this` (ownEvaluate).
      const evaluate = ownEvaluate(node);
      node.evaluate =
        step === 'lenient'
          ? // `all` and `exists` take an error their step returns as one it throws (cel-js
            // `tryEval`), and go on: returned, not thrown again by each remaining step
            // (10^6 throws took 1-3 s).
            (ev, ast, ctx) => {
              if (++taken > MAX_MACRO_STEPS) return exhausted;
              if (meter.over) return outOfTime;
              if (meter.work >= meter.checkAt) lookAtClock();
              return workOf(evaluate(ev, ast, ctx));
            }
          : step === 'fatal'
            ? (ev, ast, ctx) => {
                if (++taken > MAX_MACRO_STEPS) throw exhausted;
                if (meter.work >= meter.checkAt) lookAtClock();
                return workOf(evaluate(ev, ast, ctx));
              }
            : (ev, ast, ctx) => {
                if (meter.work >= meter.checkAt) lookAtClock();
                return workOf(evaluate(ev, ast, ctx));
              };
      return true;
    },
    { expansions: true },
  );
  // Only literals, comparisons, arithmetic on them and the like: nothing to meter.
  if (!any) return program;
  return (variables) => {
    taken = 0;
    if (!meter.inEvent) resetMeter();
    return program(variables);
  };
}

/** Counts a node's work by what it gives (CLOCK_EVERY), and hands it on. */
function workOf(value: unknown): unknown {
  meter.work +=
    typeof value === 'string'
      ? 1 + (value.length >>> 10)
      : Array.isArray(value)
        ? 1 + (value.length >>> 6)
        : 1;
  return value;
}

/**
 * The `step` node of every comprehension (a list macro's expansion) under `root`: `lenient`
 * when its errors do not end the comprehension (`all`, `exists`: cel-js runs their steps
 * with `tryEval`), `fatal` when they do (`map`, `filter`, `exists_one`).
 */
function comprehensionSteps(root: AstNode): Map<AstNode, 'lenient' | 'fatal'> {
  const steps = new Map<AstNode, 'lenient' | 'fatal'>();
  walk(
    root,
    (node) => {
      if (node.op !== 'comprehension') return true;
      const { step, kind, errorsAreFatal } = node.args as {
        step?: unknown;
        kind?: unknown;
        errorsAreFatal?: unknown;
      };
      if (isNode(step)) steps.set(step, kind === 'quantifier' && !errorsAreFatal ? 'lenient' : 'fatal');
      return true;
    },
    { expansions: true },
  );
  return steps;
}

/**
 * What a node's `evaluate` resolves to, as cel-js's ASTNode.evaluate does on its first call
 * (which replaces itself on the node, and would replace a wrapper set before it ran).
 */
function ownEvaluate(node: AstNode): AstNode['evaluate'] {
  if (Object.hasOwn(node, 'evaluate')) return node.evaluate;
  const meta = node.meta!;
  const { alternate, macro } = meta;
  if (alternate) return (ev, _ast, ctx) => alternate.evaluate(ev, alternate, ctx);
  if (macro) return (ev, _ast, ctx) => macro.evaluate(ev, macro as unknown as AstNode, ctx);
  return meta.evaluate!;
}

/**
 * Comprehensions (`map`, `filter`, `all`, `exists`, `exists_one`) nest multiplicatively: each
 * level runs the one inside it once per element, so eight nested `[0..9].map(...)` are 10^8
 * evaluations (and gigabytes of lists) per event from a 279-character expression. Two levels
 * cover real uses (a list of maps, each with a list) and keep an event's cost polynomial in
 * its size.
 */
export const MAX_COMPREHENSION_DEPTH = 2;
const COMPREHENSIONS = new Set(['map', 'filter', 'all', 'exists', 'exists_one']);

function tooDeepComprehension(root: AstNode): CelCompiled | undefined {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (Array.isArray(node)) {
      for (const item of node) stack.push([item, depth]);
      continue;
    }
    if (!isNode(node)) continue;
    const comprehension =
      (node.op === 'rcall' || node.op === 'call') &&
      Array.isArray(node.args) &&
      COMPREHENSIONS.has(node.args[0] as string);
    const level = comprehension ? depth + 1 : depth;
    if (level > MAX_COMPREHENSION_DEPTH)
      return {
        ok: false,
        offset: node.start,
        message: `${String((node.args as unknown[])[0])}() inside ${MAX_COMPREHENSION_DEPTH} other list macros: at most ${MAX_COMPREHENSION_DEPTH} of map, filter, all, exists and exists_one may nest (each level runs the next once per element)`,
      };
    // A receiver is evaluated once, before: `xs.map(…).filter(…)` chains, it does not nest.
    if (comprehension && node.op === 'rcall') {
      const [, receiver, args] = node.args as unknown[];
      stack.push([receiver, depth], [args, level]);
    } else if (Array.isArray(node.args)) for (const arg of node.args) stack.push([arg, level]);
    else if (isNode(node.args)) stack.push([node.args, level]);
  }
  return undefined;
}

/**
 * Visits every node under `root`; `visit` returns false to skip a node's children. With
 * `expansions`, also the nodes cel-js expanded macros into (`meta.alternate`, a comprehension's
 * parts), each once: an expansion shares the nodes of the macro's arguments.
 */
function walk(
  root: AstNode,
  visit: (node: AstNode) => boolean,
  options: { expansions?: boolean } = {},
): void {
  const seen = options.expansions ? new Set<AstNode>() : undefined;
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!isNode(node) || seen?.has(node) || !visit(node)) continue;
    seen?.add(node);
    if (seen && node.meta?.alternate) stack.push(node.meta.alternate);
    if (Array.isArray(node.args)) stack.push(...node.args);
    else if (isNode(node.args)) stack.push(node.args);
    else if (seen && node.op === 'comprehension') {
      const { iterable, init, step } = node.args as Record<string, unknown>;
      stack.push(iterable, init, step);
    }
  }
}

const FIELD_OPS = new Set(['.', '.?']);
const INDEX_OPS = new Set(['[]', '[?]']);

function eventFieldsRead(root: AstNode): string[] | undefined {
  const fields = new Set<string>();
  let anyField = false;
  walk(root, (node) => {
    if (anyField) return false;
    if (node.op === 'id' && node.args === 'event') {
      anyField = true;
      return false;
    }
    const args = node.args as unknown[];
    if ((FIELD_OPS.has(node.op) || INDEX_OPS.has(node.op)) && isEventId(args[0])) {
      const key = FIELD_OPS.has(node.op) ? args[1] : literalString(args[1]);
      if (typeof key === 'string') fields.add(key);
      else anyField = true;
      return false;
    }
    return true;
  });
  return anyField ? undefined : [...fields];
}

function isEventId(value: unknown): boolean {
  return isNode(value) && value.op === 'id' && value.args === 'event';
}

function literalString(value: unknown): string | undefined {
  return isNode(value) && value.op === 'value' && typeof value.args === 'string' ? value.args : undefined;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as AstNode).op === 'string';
}
