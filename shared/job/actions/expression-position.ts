/**
 * Where in a job file a problem inside a CEL expression is: the validation message says
 * at which character of the expression (`EXPRESSION_OFFSET`), and this finds the
 * expression's YAML node and counts into its source, so `sluice job validate` and the
 * API point at the line and column of the offending token, not at the field.
 *
 * Plain and quoted one-line scalars and block scalars (`|`, `>`) are mapped exactly when
 * the source holds the expression as written (no escapes before the offset); otherwise
 * the position of the node itself is given.
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
  const before = value.slice(0, offset);
  switch (node.type) {
    case 'PLAIN':
      return source.startsWith(before) ? offset : 0;
    case 'QUOTE_DOUBLE':
    case 'QUOTE_SINGLE':
      return source.slice(1).startsWith(before) ? offset + 1 : 0;
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED': {
      // Header line (`|`, `|-`, `>2`), then the lines indented by the block's indentation.
      const lines = before.split('\n');
      const row = lines.length - 1;
      const sourceLines = source.split('\n');
      const body = sourceLines.slice(1);
      const indent = /^ */.exec(body.find((l) => l.trim() !== '') ?? '')![0].length;
      // A folded block joins its lines with spaces: only its first line maps one to one.
      if (node.type === 'BLOCK_FOLDED' && (row > 0 || before.length > (body[0] ?? '').length - indent))
        return 0;
      let at = sourceLines[0]!.length + 1;
      for (let i = 0; i < row; i++) at += (body[i] ?? '').length + 1;
      return at + indent + lines[row]!.length;
    }
    default:
      return 0;
  }
}
