/**
 * Where in a job file a problem inside a CEL expression is: the validation message says
 * at which character of the expression (`EXPRESSION_OFFSET`), and this finds the
 * expression's YAML node and counts into its source, so `sluice job validate` and the
 * API point at the line and column of the offending token, not at the field.
 *
 * Plain scalars (on one line or folded over several), block scalars (`|`, `>`, `>-`) and
 * quoted one-line scalars are mapped exactly when the source holds the expression as
 * written (no escapes before the offset); otherwise the position of the node itself is given.
 */
import { type Document, isMap, isScalar, type LineCounter, type Scalar } from 'yaml';
import { EXPRESSION_OFFSET } from './schema.ts';

export function expressionPosition(
  document: Document,
  lineCounter: LineCounter,
  text: string,
  path: string,
  message: string,
): { line: number; column: number } | undefined {
  const match = EXPRESSION_OFFSET.exec(message);
  if (!match) return undefined;
  const node = expressionNode(document, path);
  if (!node?.range || typeof node.value !== 'string') return undefined;
  const offset = Math.min(Number(match[1]) - 1, node.value.length);
  const source = text.slice(node.range[0], node.range[1]);
  const at = sourceOffset(node, source, offset);
  const pos = lineCounter.linePos(node.range[0] + at);
  return { line: pos.line, column: pos.col };
}

/** `actions.N.filter` or `actions.N.set.<field>` (a field may hold dots). */
function expressionNode(document: Document, path: string): Scalar | undefined {
  const m = /^actions\.(\d+)\.(filter|set)(?:\.(.+))?$/.exec(path);
  if (!m) return undefined;
  const action = document.getIn(['actions', Number(m[1])], true);
  if (!isMap(action)) return undefined;
  let node = action.get(m[2], true);
  if (m[2] === 'set') {
    if (!isMap(node) || m[3] === undefined) return undefined;
    node = node.get(m[3], true);
  }
  return isScalar(node) ? node : undefined;
}

function sourceOffset(node: Scalar, source: string, offset: number): number {
  const value = node.value as string;
  switch (node.type) {
    case 'QUOTE_DOUBLE':
    case 'QUOTE_SINGLE':
      return source.slice(1).startsWith(value.slice(0, offset)) ? offset + 1 : 0;
    case 'PLAIN':
      return lineMappedOffset(value, source.split('\n'), offset) ?? 0;
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED': {
      // The header line (`|`, `>-`, `>2`) holds none of the value.
      const [header, ...body] = source.split('\n');
      const at = lineMappedOffset(value, body, offset);
      return at === undefined ? 0 : header!.length + 1 + at;
    }
    default:
      return 0;
  }
}

/**
 * Offset in `lines` (joined by newlines) of the value's character `offset`. Each line's
 * text, without its indentation, stands in the value in order, between nothing but the
 * spaces and newlines that folding and indentation make of the line breaks: finding each
 * line's text in turn maps a folded block (`>-`), a literal one (`|`) and a plain scalar
 * over several lines alike. A character between two lines' texts maps to the end of the
 * first, one past the end of the value to the end of the last. Undefined when a line's
 * text is not in the value as written.
 */
function lineMappedOffset(value: string, lines: readonly string[], offset: number): number | undefined {
  let lineStart = 0;
  let searchFrom = 0;
  let previousEnd: number | undefined;
  for (const line of lines) {
    const text = line.trim();
    const textStart = lineStart + line.indexOf(text);
    lineStart += line.length + 1;
    if (text === '') continue;
    const found = value.indexOf(text, searchFrom);
    if (found < 0) return undefined;
    if (offset < found) return previousEnd ?? textStart;
    if (offset < found + text.length) return textStart + (offset - found);
    searchFrom = found + text.length;
    previousEnd = textStart + text.length;
  }
  return previousEnd;
}
