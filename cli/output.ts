/**
 * `-o table|json|yaml`: every command hands its result here. Tables are for people,
 * JSON and YAML for scripts (stable keys, the API's own field names).
 *
 * @example
 *   printResult(io, workers, format, { columns: ['id', 'state', 'last_seen'] });
 */
import Table from 'cli-table3';
import { Document, visit } from 'yaml';
import { BIDI, terminalLine, terminalText, unicodeEscape } from '../shared/terminal-text.ts';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads standard input to the end (passwords, keys, secrets). */
  readStdin: () => Promise<string>;
  stdinIsTty: boolean;
  /**
   * Shows `prompt` and reads one line from the terminal on standard input without echo
   * (cli/password-prompt.ts). Present only when standard input is a terminal; absent in tests
   * that do not stand in for one.
   */
  promptHidden?: (prompt: string) => Promise<string>;
  /**
   * Aborts when standard output can take no more (its reader went away, or a full disk):
   * a command that runs until Ctrl-C (`events tail`) stops then. Absent in tests.
   */
  stdoutClosed?: AbortSignal;
}

export interface TableSpec {
  /** Field names shown as columns, in order; nested values print as compact JSON. */
  columns: string[];
}

export function formatResult(data: unknown, format: OutputFormat, table?: TableSpec): string {
  if (format === 'json') return jsonText(data, 2);
  if (format === 'yaml') return yamlText(data).trimEnd();
  if (table && Array.isArray(data)) return renderTable(data as Record<string, unknown>[], table.columns);
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    return renderTable(
      Object.entries(data).map(([key, value]) => ({ key, value })),
      ['key', 'value'],
    );
  }
  return typeof data === 'string' ? terminalText(data) : jsonText(data);
}

/**
 * How far `iso` is from now, roughly, for people: `2 h ago`, `in 5 min`. Empty when `iso`
 * is not a time.
 */
export function relativeTime(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  if (Number.isNaN(ms)) return '';
  const abs = Math.abs(ms);
  const amount =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 90 * 60_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 48 * 3_600_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return ms < 0 ? `${amount} ago` : `in ${amount}`;
}

export function printResult(io: CliIo, data: unknown, format: OutputFormat, table?: TableSpec): void {
  io.stdout(formatResult(data, format, table) + '\n');
}

function renderTable(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const table = new Table({
    head: columns.map((c) => c.toUpperCase()),
    style: { head: [], border: [] },
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
  });
  for (const row of rows) table.push(columns.map((c) => cell(row[c])));
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd().replace(/^ /, ''))
    .join('\n');
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return terminalLine(value);
  return jsonText(value);
}

/** What JSON.stringify leaves as it is and a terminal may obey: DEL, C1 controls, BIDI. */
const UNSAFE_IN_JSON = new RegExp(`[\\u007f-\\u009f${BIDI}]`, 'gu');

/**
 * JSON as JSON.stringify writes it (which escapes C0 controls), with DEL, C1 controls and
 * BIDI escaped too (`\u009b`, `\u202e`): the same value to a parser, nothing a terminal obeys.
 * These characters occur only inside strings, where `\uNNNN` is their JSON escape.
 */
export function jsonText(data: unknown, indent?: number): string {
  return JSON.stringify(data, null, indent).replace(UNSAFE_IN_JSON, unicodeEscape);
}

/**
 * YAML of `data`. The yaml package escapes C0 controls but writes C1 controls and BIDI as
 * they are, so strings that hold one are double-quoted and the character written as its
 * `\uNNNN` escape: the same value to a parser, nothing a terminal obeys.
 */
function yamlText(data: unknown): string {
  const doc = new Document(data);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && new RegExp(UNSAFE_IN_JSON.source, 'u').test(node.value))
        node.type = 'QUOTE_DOUBLE';
    },
  });
  // Every such character is now inside a double-quoted scalar, where `\uNNNN` is its escape.
  return doc.toString().replace(UNSAFE_IN_JSON, unicodeEscape);
}
