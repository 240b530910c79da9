/**
 * The syntax of references in a job's strings, declared once: `parseTemplate` splits a
 * string into text and `{{key}}` context references for rendering (shared/context/render.ts),
 * and `referenceProblem` refuses a malformed reference of either kind where a job is
 * validated (the saved and stored levels of shared/job/fields.ts), so that a mistake is
 * reported at its field instead of reaching a worker as literal text.
 *
 * What counts as an attempted context reference: every `{{` not written `\{{` (the escape,
 * a literal `{{`). In a run of braces the last two open it (`{{{k}}}` is `{`, the value, `}`),
 * as the renderer always read them. It must be `{{`, optional spaces, a key (a letter or _,
 * then letters, digits, _ -), any `.sub` / `.0` parts, optional spaces, `}}`; anything else
 * (`{{ }}`, `{{a b}}`, `{{unclosed`) is refused. A lone `{` or `}`, `}}`, JSON and regexes
 * like `a{2}` hold no `{{` and are text. Runtime references (`${secret|...}`, `${dyn|...}`)
 * follow the rule in shared/runtime-refs.ts.
 *
 * Both scanners are linear: one pass with indexOf, no backtracking, stopping at the first
 * problem, so a 1 MiB string of `{{{{...` costs one pass.
 *
 * @example
 *   parseTemplate('s3://{{bucket}}/in'); // { ok: true, parts: [{ text: 's3://' }, { ref: ['bucket'], raw: '{{bucket}}' }, { text: '/in' }] }
 *   referenceProblem('{{ }}');            // '`{{ }}` is an empty context reference: ...'
 *   isWholeReference('{{ names }}');      // true; 'logs/{{names}}' and '{{a}}{{b}}' are text
 */
import { excerpt, runtimeReferenceProblem, skipSpaces } from '../runtime-refs.ts';

export type TemplatePart = { text: string } | { ref: string[]; raw: string };
export type ParsedTemplate = { ok: true; parts: TemplatePart[] } | { ok: false; problem: string };

const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const ESCAPE_HINT = 'write \\{{ for a literal {{';

/** Text and `{{key}}` references of `text` (`\{{` becomes a literal `{{`), or its first malformed reference. */
export function parseTemplate(text: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  let literal = '';
  let copied = 0;
  let from = 0;
  for (;;) {
    const open = text.indexOf('{{', from);
    if (open < 0) break;
    if (open > 0 && text.charCodeAt(open - 1) === BACKSLASH) {
      literal += `${text.slice(copied, open - 1)}{{`;
      copied = from = open + 2;
      continue;
    }
    if (text.charCodeAt(open + 2) === OPEN_BRACE) {
      from = open + 1;
      continue;
    }
    const end = referenceEnd(text, open);
    if (typeof end !== 'number') return { ok: false, problem: end.problem };
    literal += text.slice(copied, open);
    if (literal) parts.push({ text: literal });
    literal = '';
    const raw = text.slice(open, end);
    parts.push({ ref: raw.slice(2, -2).trim().split('.'), raw });
    copied = from = end;
  }
  literal += text.slice(copied);
  if (literal) parts.push({ text: literal });
  return { ok: true, parts };
}

/**
 * Whether `text` is exactly one well-formed `{{key}}` reference and nothing else (spaces inside
 * the braces allowed): what rendering replaces by the context value with its JSON type. Any
 * other text around it, another reference or `{{{key}}}` makes text, rendered as text.
 */
export function isWholeReference(text: string): boolean {
  if (!text.startsWith('{{') || !text.endsWith('}}')) return false;
  const parsed = parseTemplate(text);
  if (!parsed.ok || parsed.parts.length !== 1) return false;
  const [part] = parsed.parts;
  return part !== undefined && 'ref' in part && part.raw === text;
}

/**
 * What is wrong with the references of a string as written in a job, or undefined. A runtime
 * reference holding a `{{key}}` (`${secret|{{scope}}/token}`) is judged once rendered.
 */
export function referenceProblem(text: string): string | undefined {
  let runtime = text;
  if (text.includes('{{')) {
    const parsed = parseTemplate(text);
    if (!parsed.ok) return parsed.problem;
    runtime = parsed.parts.map((part) => ('text' in part ? part.text : UNRENDERED)).join('');
  }
  return runtime.includes('${') ? runtimeReferenceProblem(runtime, UNRENDERED) : undefined;
}

/** Stands for a `{{key}}` not yet rendered when runtime references are checked. */
const UNRENDERED = '\u0000';

/** The index just past the `}}` of the reference opened at `open`, or what is wrong with it. */
function referenceEnd(text: string, open: number): number | { problem: string } {
  let i = skipSpaces(text, open + 2);
  if (isKeyStart(text.charCodeAt(i))) {
    i++;
    while (isKeyChar(text.charCodeAt(i))) i++;
    while (text.charCodeAt(i) === 0x2e && isKeyChar(text.charCodeAt(i + 1))) {
      i += 2;
      while (isKeyChar(text.charCodeAt(i))) i++;
    }
    i = skipSpaces(text, i);
    if (text.startsWith('}}', i)) return i + 2;
  }
  const close = text.indexOf('}}', open + 2);
  const reopened = text.indexOf('{{', open + 2);
  if (close < 0 || (reopened >= 0 && reopened < close)) {
    const written = excerpt(text.slice(open, reopened < 0 ? undefined : reopened).trimEnd());
    return { problem: `\`${written}\` opens a context reference that is not closed with }}; ${ESCAPE_HINT}` };
  }
  const written = excerpt(text.slice(open, close + 2));
  if (text.slice(open + 2, close).trim() === '')
    return {
      problem: `\`${written}\` is an empty context reference: name a key, as in {{bucket}}; ${ESCAPE_HINT}`,
    };
  return {
    problem: `\`${written}\` is not a context reference: a key starts with a letter or _ and holds letters, digits, _ and -, with .sub or .0 to reach inside a value; ${ESCAPE_HINT}`,
  };
}

function isKeyStart(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
}

function isKeyChar(code: number): boolean {
  return isKeyStart(code) || (code >= 0x30 && code <= 0x39) || code === 0x2d;
}
