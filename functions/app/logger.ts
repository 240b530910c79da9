/**
 * Structured JSON logs (pino). Credentials are redacted by path so that a careless
 * `logger.info({ body })` can never print a password, key, token or secret value.
 *
 * @example
 *   logger.info({ requestId, status: 200 }, 'request');
 */
import { type Logger, pino } from 'pino';

const SENSITIVE = ['password', 'key', 'secret', 'token', 'value', 'authorization', 'cookie', 'access_token'];

export const REDACT_PATHS = [
  ...SENSITIVE,
  ...SENSITIVE.map((k) => `*.${k}`),
  ...SENSITIVE.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-csrf-token"]',
];

export type { Logger };

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = options.level ?? process.env.SLUICE_LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info');
  return pino(
    {
      level,
      base: { service: 'sluice' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ severity: label.toUpperCase(), level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
