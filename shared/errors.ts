/**
 * The one error type of Sluice. Every failure the API reports is an `ApiError`;
 * the HTTP edge turns it into the contract's body
 * `{"error":{"code","message","details"?}}` and the CLI into a message and an exit code.
 *
 * @example
 *   throw ApiError.invalid('context keys must be strings', [{ path: 'a b', message: 'invalid key' }]);
 */

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

export interface ErrorDetail {
  /** Dotted path of the offending field, e.g. `input.gcs.bucket-name` (empty for the whole document). */
  path: string;
  message: string;
  /** 1-based position in YAML input, where known. */
  line?: number;
  column?: number;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  /** Seconds, for 429 and 503 answers. */
  readonly retryAfter: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.details = options.details?.length ? options.details : undefined;
    this.retryAfter = options.retryAfter;
  }

  get status(): ErrorStatus {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return {
      error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) },
    };
  }

  static invalid(message: string, details?: ErrorDetail[]): ApiError {
    return new ApiError('invalid_request', message, details ? { details } : {});
  }
  static unauthenticated(message = 'authentication is missing, invalid or expired'): ApiError {
    return new ApiError('unauthenticated', message);
  }
  static forbidden(message = 'this identity may not do that'): ApiError {
    return new ApiError('forbidden', message);
  }
  static notFound(message: string): ApiError {
    return new ApiError('not_found', message);
  }
  static conflict(message: string): ApiError {
    return new ApiError('conflict', message);
  }
  static rateLimited(retryAfter: number): ApiError {
    return new ApiError('rate_limited', 'too many attempts; try again later', { retryAfter });
  }
  static unavailable(message: string, retryAfter = 5): ApiError {
    return new ApiError('unavailable', message, { retryAfter });
  }
}

/** Joins a zod/YAML path (`['input','gcs','retry',0]`) the way the contract prints it: `input.gcs.retry.0`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p) => String(p)).join('.');
}

/** Minimal structural view of a zod issue, so this module needs no zod import. */
export interface IssueLike {
  path: readonly PropertyKey[];
  message: string;
}

export function issuesToDetails(
  issues: readonly IssueLike[],
  prefix: readonly PropertyKey[] = [],
): ErrorDetail[] {
  return issues.map((issue) => ({ path: formatPath([...prefix, ...issue.path]), message: issue.message }));
}
