/**
 * Turns a validated `gcs` input (the job language's `GcsInput`, defaults applied) into
 * the plan the pipeline runs: durations in milliseconds, regexes compiled once, the
 * timestamp strategy resolved. Everything that can be checked is checked here, once,
 * not per object.
 *
 * @example
 *   const plan = planGcsInput(job.input.gcs);
 *   plan.maximumAgeMs; // 3_600_000 for `maximum-age: { value: 1h }`
 */
import { parseDuration } from '../../../../shared/duration.ts';
import type { GcsInput } from '../../../../shared/job/index.ts';
import type { GCS_MODES, PAYLOAD_MODES, PREPROCESSORS } from '../../../../shared/job/inputs/gcs.ts';
import { compileSafeRegex, type SafeRegex } from '../../../../shared/regex.ts';

// The job language declares the values and defaults (shared/job/inputs/gcs.ts); a
// validated input arrives with every default applied, so none is restated here.
export type Preprocessor = (typeof PREPROCESSORS)[number];
export type PayloadMode = (typeof PAYLOAD_MODES)[number];
export type GcsMode = (typeof GCS_MODES)[number];

export type TimestampStrategy =
  | { kind: 'none' }
  | { kind: 'last-modified' }
  | { kind: 'object-name-pattern'; pattern: SafeRegex };

/** Metadata fields an event can receive, by the job field that names them. */
export interface MetadataFields {
  objectName?: string;
  creationTime?: string;
  lastModified?: string;
  contentLength?: string;
  contentType?: string;
  etag?: string;
}

export interface GcsPlan {
  bucket: string;
  mode: GcsMode;
  objectNames: string[];
  include: SafeRegex[];
  exclude: SafeRegex[];
  timestamp: TimestampStrategy;
  maximumAgeMs?: number;
  payloadMode: PayloadMode;
  ignoreLinebreaks: boolean;
  preprocessors: Preprocessor[];
  fields: MetadataFields;
  dataField?: string;
  fingerprinting: boolean;
  maximumFingerprintAgeMs: number;
  retry: { timeoutMs: number; retries: number };
  credentials: GcsInput['credentials'];
  /** Objects come from the bucket's notifications (after a first listing). */
  notifications?: { subscription: string; backfill: boolean };
  /** Whether the job has a trigger: without one, a notified input runs until stopped. */
  triggered: boolean;
  /** Each object's events together, objects in listing order (`ordered`). */
  ordered: boolean;
}

/** Retries of a transient failure when the job sets `retry` without `retries`. */
export const DEFAULT_RETRIES = 5;

export function planGcsInput(input: GcsInput): GcsPlan {
  return {
    bucket: input['bucket-name'],
    mode: input.mode,
    objectNames: input['object-names'] ?? [],
    include: (input['include-regex'] ?? []).map(compileSafeRegex),
    exclude: (input['exclude-regex'] ?? []).map(compileSafeRegex),
    timestamp: timestampStrategy(input['timestamp-mode']),
    maximumAgeMs: input['maximum-age'] ? parseDuration(input['maximum-age'].value) : undefined,
    payloadMode: input['payload-mode'],
    ignoreLinebreaks: input['ignore-linebreaks'],
    preprocessors: [...input.preprocessors],
    fields: {
      objectName: input['object-name-field'],
      creationTime: input['creation-time-field'],
      lastModified: input['last-modified-field'],
      contentLength: input['content-length-field'],
      contentType: input['content-type-field'],
      etag: input['etag-field'],
    },
    dataField: input['data-field'],
    fingerprinting: input.fingerprinting,
    maximumFingerprintAgeMs: parseDuration(input['maximum-fingerprint-age']),
    retry: {
      timeoutMs: parseDuration(input.retry.timeout, { bareSeconds: true }),
      retries: input.retry.retries ?? DEFAULT_RETRIES,
    },
    credentials: input.credentials,
    ...(input.notifications
      ? {
          notifications: {
            subscription: input.notifications.subscription,
            backfill: input.notifications.backfill,
          },
        }
      : {}),
    triggered: input.trigger !== undefined,
    ordered: input.ordered ?? false,
  };
}

function timestampStrategy(mode: GcsInput['timestamp-mode'] | undefined): TimestampStrategy {
  if (mode === undefined || mode === 'none') return { kind: 'none' };
  if (mode === 'last-modified') return { kind: 'last-modified' };
  if (typeof mode === 'object' && mode !== null) {
    const pattern = mode['object-name-pattern'];
    if (pattern) return { kind: 'object-name-pattern', pattern: compileSafeRegex(pattern) };
    if ('last-modified' in mode) return { kind: 'last-modified' };
  }
  return { kind: 'none' };
}
