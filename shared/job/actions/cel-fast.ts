/**
 * A fast path for the CEL expressions most actions are made of: `event.name` fields,
 * literals, comparisons, arithmetic, string concatenation, `!`, `-`, `&&`, `||` and `? :`.
 * The library's evaluator (`@marcbachmann/cel-js`) walks the tree and looks up an operator
 * overload by runtime type at each node, for each event; here the tree becomes nested
 * closures once, when the job is compiled, and the hot case costs a few comparisons.
 *
 * The library stays the authority. A closure handles only operands whose outcome is plain
 * (two doubles, two strings, an int that fits a double against a double, ...); for anything
 * else (a missing field, a type mismatch, an int overflow, a division by zero, a NaN, a map
 * or list value) it throws NOT_HERE, and the caller evaluates the same expression with the
 * library, which gives the value or the error CEL defines. Expressions are side-effect
 * free, so evaluating one again from the start changes nothing.
 *
 * Values are the library's: doubles are numbers, ints are BigInts.
 *
 * @example
 *   const fast = compileFastCel(program.ast, ['status']); // undefined: always use the library
 *   try { fast([503], 'job-1', 'w-1') } catch (e) { if (e === NOT_HERE) program(variables) }
 */

/** Thrown when an operand is not one the fast path decides alone. */
export const NOT_HERE: unique symbol = Symbol('not-here');

/**
 * `fields` holds the event's values of the names given at compile time, in that order
 * (`undefined` when the event has none).
 */
export type FastCel = (fields: readonly unknown[], job: string, worker: string) => unknown;

/** The parts of the library's AST node read here. */
interface Node {
  op: string;
  args: unknown;
}

type Closure = FastCel;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Ints in this range convert to doubles exactly. */
const EXACT_MIN = -(2n ** 53n);
const EXACT_MAX = 2n ** 53n;

function notHere(): never {
  throw NOT_HERE;
}

/** Undefined when the expression uses anything the fast path does not take. */
export function compileFastCel(ast: unknown, fields: readonly string[]): FastCel | undefined {
  try {
    return build(ast as Node, fields);
  } catch (err) {
    if (err === UNSUPPORTED) return undefined;
    throw err;
  }
}

const UNSUPPORTED = Symbol('unsupported');

function unsupported(): never {
  throw UNSUPPORTED;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).op === 'string';
}

function build(node: Node, fields: readonly string[]): Closure {
  if (!isNode(node)) unsupported();
  const args = node.args as unknown[];
  switch (node.op) {
    case 'value':
      return literal(node.args);
    case 'id':
      if (node.args === 'job') return (_f, job) => job;
      if (node.args === 'worker') return (_f, _j, worker) => worker;
      return unsupported();
    case '.':
    case '[]': {
      const at = fieldAt(node, fields);
      if (at < 0) unsupported();
      return (values) => {
        const value = values[at];
        // Maps and lists (and a missing field) are the library's.
        if (value === undefined || (typeof value === 'object' && value !== null)) notHere();
        return value;
      };
    }
    case '!_': {
      const operand = build(args as unknown as Node, fields);
      return (f, j, w) => {
        const value = operand(f, j, w);
        return typeof value === 'boolean' ? !value : notHere();
      };
    }
    case '-_': {
      const operand = build(args as unknown as Node, fields);
      return (f, j, w) => {
        const value = operand(f, j, w);
        if (typeof value === 'number') return -value;
        if (typeof value === 'bigint' && value !== INT64_MIN) return -value;
        return notHere();
      };
    }
    case '&&':
    case '||': {
      const left = build(args[0] as Node, fields);
      const right = build(args[1] as Node, fields);
      // CEL's && and || absorb an error on one side when the other decides; such cases
      // (a side that is not a bool) are the library's.
      const decides = node.op === '||';
      return (f, j, w) => {
        const first = left(f, j, w);
        if (typeof first !== 'boolean') notHere();
        if (first === decides) return first;
        const second = right(f, j, w);
        return typeof second === 'boolean' ? second : notHere();
      };
    }
    case '?:': {
      const [condition, then, otherwise] = (args as Node[]).map((arg) => build(arg, fields));
      return (f, j, w) => {
        const test = condition!(f, j, w);
        if (typeof test !== 'boolean') notHere();
        return test ? then!(f, j, w) : otherwise!(f, j, w);
      };
    }
    case '==':
    case '!=': {
      const left = build(args[0] as Node, fields);
      const right = build(args[1] as Node, fields);
      const negate = node.op === '!=';
      return (f, j, w) => {
        const equal = same(left(f, j, w), right(f, j, w));
        return negate ? !equal : equal;
      };
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const general = comparison(node.op, build(args[0] as Node, fields), build(args[1] as Node, fields));
      return withFieldAndNumber(args, fields, general, comparisonTest(node.op), true);
    }
    case '+':
    case '-':
    case '*':
    case '/':
    case '%': {
      const general = arithmetic(node.op, build(args[0] as Node, fields), build(args[1] as Node, fields));
      const doubles = doubleArithmetic(node.op);
      return doubles ? withFieldAndNumber(args, fields, general, doubles, false) : general;
    }
    default:
      return unsupported();
  }
}

function literal(value: unknown): Closure {
  switch (typeof value) {
    case 'number':
    case 'bigint':
    case 'string':
    case 'boolean':
      return () => value;
    default:
      return value === null ? () => null : unsupported();
  }
}

function stringLiteral(value: unknown): string | undefined {
  return isNode(value) && value.op === 'value' && typeof value.args === 'string' ? value.args : undefined;
}

/** CEL equality for operands the fast path decides: same kind, or an exact int against a double. */
function same(a: unknown, b: unknown): boolean {
  const kind = typeof a;
  if (kind === typeof b) {
    if (kind === 'number' || kind === 'string' || kind === 'boolean' || kind === 'bigint') return a === b;
    if (a === null && b === null) return true;
    return notHere();
  }
  return toDouble(a, b) === toDouble(b, a);
}

/**
 * A double for an int compared with a double (exact within ±2^53), the double itself;
 * anything else is the library's.
 */
function toDouble(value: unknown, other: unknown): number {
  if (typeof value === 'number' && typeof other === 'bigint') return value;
  if (typeof value === 'bigint' && typeof other === 'number' && value >= EXACT_MIN && value <= EXACT_MAX)
    return Number(value);
  return notHere();
}

/**
 * The most common shape, `event.x OP number` (either way round), without a closure call per
 * side: when the field holds a double (not NaN) the operation is `apply(field, number)`.
 * Comparisons take an int literal that a double holds exactly as that double (as the
 * general path does); arithmetic takes double literals only (CEL has no double / int).
 * Anything else goes the general way.
 */
function withFieldAndNumber(
  args: unknown[],
  fields: readonly string[],
  general: Closure,
  apply: (a: number, b: number) => unknown,
  intsAsDoubles: boolean,
): Closure {
  const left = fieldAt(args[0], fields);
  const right = fieldAt(args[1], fields);
  const literal = (args[left >= 0 ? 1 : 0] as Node | undefined)?.args;
  const constant = typeof literal === 'bigint' && !intsAsDoubles ? undefined : exactDouble(literal);
  if (left < 0 === right < 0 || constant === undefined) return general;
  const at = left >= 0 ? left : right;
  const fieldFirst = left >= 0;
  return (f, j, w) => {
    const a = f[at];
    if (typeof a === 'number' && !Number.isNaN(a))
      return fieldFirst ? apply(a, constant) : apply(constant, a);
    return general(f, j, w);
  };
}

/** The index of `event.name` in `fields`, or -1 when `node` is no such field. */
function fieldAt(node: unknown, fields: readonly string[]): number {
  if (!isNode(node) || (node.op !== '.' && node.op !== '[]')) return -1;
  const args = node.args as unknown[];
  const target = args[0];
  if (!isNode(target) || target.op !== 'id' || target.args !== 'event') return -1;
  const key = node.op === '.' ? args[1] : stringLiteral(args[1]);
  return typeof key === 'string' ? fields.indexOf(key) : -1;
}

/** A literal double (not NaN), or an int literal a double holds exactly, as a double. */
function exactDouble(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  if (typeof value === 'bigint' && value >= EXACT_MIN && value <= EXACT_MAX) return Number(value);
  return undefined;
}

function comparisonTest(op: string): (a: number | bigint, b: number | bigint) => boolean {
  return op === '<'
    ? (a, b) => a < b
    : op === '<='
      ? (a, b) => a <= b
      : op === '>'
        ? (a, b) => a > b
        : (a, b) => a >= b;
}

/** Double arithmetic; undefined for % (CEL has no double %). */
function doubleArithmetic(op: string): ((a: number, b: number) => number) | undefined {
  return op === '+'
    ? (a, b) => a + b
    : op === '-'
      ? (a, b) => a - b
      : op === '*'
        ? (a, b) => a * b
        : op === '/'
          ? (a, b) => a / b
          : undefined;
}

function comparison(op: string, left: Closure, right: Closure): Closure {
  const test = comparisonTest(op);
  return (f, j, w) => {
    const a = left(f, j, w);
    const b = right(f, j, w);
    // NaN, strings (CEL orders by code point, JavaScript by UTF-16 unit) and the rest are the library's.
    if (typeof a === 'number' && !Number.isNaN(a)) {
      if (typeof b === 'number' && !Number.isNaN(b)) return test(a, b);
      if (typeof b === 'bigint') return test(a, toDouble(b, a));
    } else if (typeof a === 'bigint') {
      if (typeof b === 'bigint') return test(a, b);
      if (typeof b === 'number' && !Number.isNaN(b)) return test(toDouble(a, b), b);
    }
    return notHere();
  };
}

function arithmetic(op: string, left: Closure, right: Closure): Closure {
  const doubles = doubleArithmetic(op);
  const ints: (a: bigint, b: bigint) => bigint | undefined =
    op === '+'
      ? (a, b) => a + b
      : op === '-'
        ? (a, b) => a - b
        : op === '*'
          ? (a, b) => a * b
          : op === '/'
            ? (a, b) => (b === 0n ? undefined : a / b)
            : (a, b) => (b === 0n ? undefined : a % b);
  const concatenates = op === '+';
  return (f, j, w) => {
    const a = left(f, j, w);
    const b = right(f, j, w);
    if (typeof a === 'number' && typeof b === 'number' && doubles) return doubles(a, b);
    if (typeof a === 'bigint' && typeof b === 'bigint') {
      const result = ints(a, b);
      if (result !== undefined && result >= INT64_MIN && result <= INT64_MAX) return result;
    }
    if (concatenates && typeof a === 'string' && typeof b === 'string') return a + b;
    return notHere();
  };
}

/** A part of a string concatenation: an event field (its index in `fields`), or literal text. */
export type ConcatPart = { field: number } | { text: string };

/**
 * The parts of an expression that only joins string fields and string literals with `+`
 * (`event.service + ":" + event.path`), at least one of them a field; undefined otherwise.
 * When every field holds a string the value is the parts' text joined, so a caller that
 * holds the fields as JSON text can write the result without decoding them.
 */
export function stringConcatParts(ast: unknown, fields: readonly string[]): ConcatPart[] | undefined {
  const parts: ConcatPart[] = [];
  const collect = (node: unknown): boolean => {
    if (!isNode(node)) return false;
    const args = node.args as unknown[];
    if (node.op === '+') return collect(args[0]) && collect(args[1]);
    if (node.op === 'value') {
      if (typeof node.args !== 'string') return false;
      parts.push({ text: node.args });
      return true;
    }
    const at = fieldAt(node, fields);
    if (at < 0) return false;
    parts.push({ field: at });
    return true;
  };
  return collect(ast) && parts.some((part) => 'field' in part) ? parts : undefined;
}
