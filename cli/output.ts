/**
 * `-o table|json|yaml`: every command hands its result here. Tables are for people,
 * JSON and YAML for scripts (stable keys, the API's own field names).
 *
 * @example
 *   printResult(io, workers, format, { columns: ['id', 'state', 'last_seen'] });
 */
import Table from 'cli-table3';
import { stringify } from 'yaml';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads standard input to the end (passwords, keys, secrets). */
  readStdin: () => Promise<string>;
  stdinIsTty: boolean;
}

export interface TableSpec {
  /** Field names shown as columns, in order; nested values print as compact JSON. */
  columns: string[];
}

export function formatResult(data: unknown, format: OutputFormat, table?: TableSpec): string {
  if (format === 'json') return JSON.stringify(data, null, 2);
  if (format === 'yaml') return stringify(data).trimEnd();
  if (table && Array.isArray(data)) return renderTable(data as Record<string, unknown>[], table.columns);
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    return renderTable(
      Object.entries(data).map(([key, value]) => ({ key, value })),
      ['key', 'value'],
    );
  }
  return typeof data === 'string' ? data : JSON.stringify(data);
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
  if (typeof value === 'string') return visible(value);
  return JSON.stringify(value);
}

/**
 * A string as text a terminal shows and does not obey: names and labels come from other
 * people (an API key's name, a worker's label), and an escape sequence in one would retitle
 * the window, recolour or rewrite the screen. Control characters are written as `\xNN`.
 */
function visible(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
