/**
 * The `npm start` terminal is read by people: each JSON log line from pino becomes one
 * readable line (time, level, message, then the fields), e.g.
 *
 *   22:41:07.312 WARN  request POST /api/jobs/x 400 3.1 ms subject=admin tenant=default
 *
 * Redaction has already happened (pino redacts before it serializes), so this sees no
 * secret. `SLUICE_LOG_FORMAT=json` keeps the JSON lines instead (what the cloud writes
 * for Cloud Logging).
 */
import { Writable } from 'node:stream';
import { terminalLine } from '../shared/terminal-text.ts';

/** Fields that every line carries or that the line's head already shows. */
const SHOWN = new Set([
  'time',
  'level',
  'severity',
  'msg',
  'service',
  'requestId',
  'method',
  'path',
  'status',
  'ms',
]);

export function readableLogStream(out: NodeJS.WritableStream): Writable {
  let partial = '';
  return new Writable({
    write(chunk, _encoding, done) {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line) out.write(`${readableLine(line)}\n`);
      done();
    },
  });
}

export function readableLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return terminalLine(json);
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = String(entry.level ?? 'info')
    .toUpperCase()
    .padEnd(5);
  const head = [time, level, String(entry.msg ?? '')];
  if (entry.method) head.push(`${entry.method} ${entry.path} ${entry.status} ${entry.ms} ms`);
  const fields = Object.entries(entry)
    .filter(([key]) => !SHOWN.has(key))
    .map(([key, value]) => `${key}=${describe(value)}`);
  // Paths and names come from whoever sent the request, logged in or not.
  return terminalLine([...head, ...fields].join(' '));
}

function describe(value: unknown): string {
  if (typeof value === 'string') return /\s/.test(value) ? JSON.stringify(value) : value;
  if (value && typeof value === 'object' && 'message' in value)
    return JSON.stringify((value as { message: unknown }).message);
  return JSON.stringify(value);
}
