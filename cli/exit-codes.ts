/**
 * Exit codes of the `sluice` CLI, and the one error type commands throw.
 * 0 ok, 1 error, 2 usage, 3 unauthenticated or forbidden, 4 not found.
 */
import type { ErrorCode } from '../shared/errors.ts';

export const EXIT = { ok: 0, error: 1, usage: 2, auth: 3, notFound: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
    /** Extra lines: what to do next, or per-field details. */
    readonly hints: string[] = [],
    /** The API's error code, when the server refused the request. */
    readonly apiCode?: ErrorCode,
  ) {
    super(message);
    this.name = 'CliError';
  }

  static usage(message: string): CliError {
    return new CliError(message, EXIT.usage);
  }
}

export function exitCodeForApiError(code: ErrorCode): ExitCode {
  if (code === 'unauthenticated' || code === 'forbidden') return EXIT.auth;
  if (code === 'not_found') return EXIT.notFound;
  return EXIT.error;
}
