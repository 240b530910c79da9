import { validateJob } from '../../../shared/job/index.ts';

export const MINIMAL_GCS = {
  'bucket-name': 'acme-logs',
  credentials: { 'storage-url': 'gs://acme-logs' },
  'object-names': [],
};

export function gcsJob(fields: Record<string, unknown>, level: 'saved' | 'rendered' = 'rendered') {
  return validateJob(
    { name: 'j', input: { gcs: { ...MINIMAL_GCS, ...fields } }, output: { print: {} } },
    { level },
  );
}

/** The validated gcs input, or the error details when invalid. */
export function gcsFields(fields: Record<string, unknown>, level: 'saved' | 'rendered' = 'rendered') {
  const result = gcsJob(fields, level);
  return result.ok
    ? { ok: true as const, gcs: result.job.input.gcs! }
    : { ok: false as const, errors: result.errors };
}

export function triggerJob(trigger: unknown, level: 'saved' | 'rendered' = 'rendered') {
  // A window needs a timestamp to compare (the gcs input refuses it with timestamp-mode none).
  return gcsFields({ trigger, 'timestamp-mode': 'last-modified' }, level);
}
