/**
 * The `gcs` input (seed: Input `gcs`): reads objects from a Cloud Storage bucket.
 * This declaration is the single source of its validation, types, defaults, JSON Schema
 * and reference page.
 */
import { z } from 'zod';
import { googleCredentialsSchema } from '../credentials.ts';
import { enumMessage, exactlyOne, type Fields } from '../fields.ts';
import { triggerSchema } from '../triggers.ts';

export const GCS_MODES = ['list-and-download-objects', 'list-objects', 'download-objects'] as const;
export const PAYLOAD_MODES = ['auto', 'json', 'raw', 'binary'] as const;
export const TIMESTAMP_MODES = ['none', 'last-modified'] as const;
export const PREPROCESSORS = ['extension', 'gzip', 'parquet', 'base64'] as const;

export const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]$/;
const BUCKET_NAME_RULE = '3-63 lowercase letters, digits, dashes, dots or underscores';
/** A Google Cloud project ID, as a subscription's full name may give it (and `sluice gcs notify --project`). */
const PROJECT_ID_SOURCE = '[a-z][a-z0-9-]{4,28}[a-z0-9]';
export const PROJECT_ID = new RegExp(`^${PROJECT_ID_SOURCE}$`);
export const PROJECT_ID_RULE =
  '6-30 lowercase letters, digits or dashes, a letter first and no dash last (a domain-scoped ID, example.com:project, is not taken)';
/** A Pub/Sub resource's short name: 3-255 characters, a letter first. */
const PUBSUB_NAME_SOURCE = '[A-Za-z][\\w.~+%-]{2,254}';
export const PUBSUB_NAME = new RegExp(`^${PUBSUB_NAME_SOURCE}$`);
export const PUBSUB_NAME_RULE = 'a letter, then 2-254 of letters, digits, - _ . ~ + %';
/** A Pub/Sub subscription: its short name (in the project of the credentials) or its full name. */
export const SUBSCRIPTION_NAME = new RegExp(
  `^(projects\\/${PROJECT_ID_SOURCE}\\/subscriptions\\/)?${PUBSUB_NAME_SOURCE}$`,
);

/** The bucket alone (a trailing `/` is fine): a path would be silently ignored, so it is refused. */
const STORAGE_URL = /^gs:\/\/[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]\/?$/;
/** The form of STORAGE_URL whatever the bucket's name: what it names, when it names one thing. */
const STORAGE_URL_FORM = /^gs:\/\/([^/]+)\/?$/;

export function gcsInputSchema(f: Fields) {
  const credentials = googleCredentialsSchema(f, 'credentials', {
    extra: {
      'storage-url': f.typed(
        z.string().regex(STORAGE_URL, { error: (issue) => storageUrlProblem(String(issue.input)) }),
        'URL of the form gs://<bucket>, naming the same bucket as bucket-name, with no path (narrow the objects with object-names).',
      ),
    },
    description:
      'How to reach the bucket: literal values or context interpolation. Without service-account or application-credentials the job runs with the identity of the machine that runs it; the cloud worker refuses that (deploy a job with a key to it).',
  });

  const timestampMode = z
    .union([
      z.enum(TIMESTAMP_MODES, { error: (issue) => enumMessage(String(issue.input), TIMESTAMP_MODES) }),
      f
        .strict(
          {
            none: z.object({}).nullish().describe('No timestamp filtering (default).'),
            'last-modified': z
              .object({})
              .nullish()
              .describe('Filter on the last-modified time the store reports.'),
            'object-name-pattern': f
              .regex(
                'Regular expression with named groups Y, m, d (and optionally H, M, S) that derives the timestamp from the object name.',
                ['Y', 'm', 'd'],
              )
              .optional(),
          },
          'timestamp-mode',
        )
        .superRefine(exactlyOne('timestamp-mode', ['none', 'last-modified', 'object-name-pattern'])),
    ])
    .describe('Derives a per-object timestamp for filtering: none, last-modified, or object-name-pattern.');

  return f
    .strict(
      {
        'payload-mode': f.enumOf(PAYLOAD_MODES, 'How payloads are interpreted.').default('auto'),
        credentials,
        mode: f
          .enumOf(
            GCS_MODES,
            'list-and-download-objects enumerates and fetches contents; list-objects enumerates only; download-objects fetches the named objects directly.',
          )
          .default('list-and-download-objects'),
        'ignore-linebreaks': f
          .boolean(
            'When true the whole object is one event; when false objects are split on newlines, unless JSON handling parses JSON arrays.',
          )
          .default(false),
        'timestamp-mode': timestampMode.default('none'),
        'maximum-age': f
          .strict({ value: f.duration('Objects older than this are ignored.') }, 'maximum-age')
          .optional()
          .describe(
            'Objects older than `value` are ignored; absent means process all visible objects. Needs a timestamp: with `timestamp-mode: none` it is refused (as is a trigger `window`), since there would be nothing to compare.',
          ),
        'include-regex': z
          .array(f.regex('Only objects whose full name matches are included.'))
          .optional()
          .describe('Only objects matching one of these are included.'),
        'exclude-regex': z
          .array(f.regex('Objects whose full name matches are excluded.'))
          .optional()
          .describe('Objects matching any of these are excluded.'),
        'bucket-name': f.typed(
          z.string().regex(BUCKET_NAME, `must be a bucket name: ${BUCKET_NAME_RULE}`),
          'Bucket to read.',
        ),
        'object-names': z
          .array(f.string('An object name or prefix.'))
          .describe(
            'Object names or prefixes; empty means every object exposed by the selected mode (large buckets are costly).',
          ),
        'object-name-field': f.fieldName('Field that receives the object name.').optional(),
        'creation-time-field': f.fieldName('Field that receives the object creation time.').optional(),
        'last-modified-field': f.fieldName('Field that receives the last-modified time.').optional(),
        'content-length-field': f.fieldName('Field that receives the content length.').optional(),
        'content-type-field': f.fieldName('Field that receives the content type.').optional(),
        'etag-field': f.fieldName('Field that receives the ETag.').optional(),
        'data-field': f
          .fieldName(
            "Field that receives the object data; by default a JSON object's fields are merged into the event, anything else goes into _raw.",
          )
          .optional(),
        preprocessors: z
          .array(f.enumOf(PREPROCESSORS, 'A preprocessing step.'))
          .default([])
          .describe(
            'Run in the listed order before data reaches the job: extension (by .gz / .parquet), gzip, parquet (rows as JSON), base64.',
          ),
        fingerprinting: f
          .boolean('When true each object is downloaded only once, also across restarts.')
          .default(false),
        'maximum-fingerprint-age': f
          .duration('How long stored fingerprints are kept before cleanup.')
          .default('30d'),
        retry: f
          .strict(
            {
              timeout: f.duration('Time allowed for one attempt; a bare number means seconds.', {
                bareSeconds: true,
              }),
              retries: f.integer('Number of retries of transient failures.').optional(),
            },
            'retry',
          )
          .default({ timeout: 30 })
          .describe('Retry of transient storage errors (429, 5xx, network).'),
        notifications: f
          .strict(
            {
              subscription: f.typed(
                z
                  .string()
                  .regex(
                    SUBSCRIPTION_NAME,
                    'must be a Pub/Sub subscription: its name (e.g. uploads-job) or projects/<project>/subscriptions/<name>',
                  ),
                "Pub/Sub subscription that receives the bucket's object notifications (`sluice gcs notify` makes one).",
              ),
              backfill: f
                .boolean(
                  'When true every run lists the bucket before reading notifications; by default only the first run does, for the objects that were there before the subscription.',
                )
                .default(false),
            },
            'notifications',
          )
          .optional()
          .describe(
            "Sluice extension: read the objects that the bucket's OBJECT_FINALIZE notifications name, as they arrive, instead of listing the bucket every run. Needs fingerprinting: true (notifications may come twice).",
          ),
        ordered: f
          .boolean(
            "When true the output gets each object's events together, objects in listing order, although several are read at once (objects read ahead of their turn hold at most 100,000 events together, then wait). Default false on workers: objects' events may interleave, which is faster; sluice job run defaults to true.",
          )
          .optional(),
        trigger: triggerSchema(f).optional(),
      },
      'input.gcs',
    )
    .superRefine((value, ctx) => {
      // maximum-age and a window compare each object's timestamp; without one they would
      // be silently ignored (a windowed job re-reading the whole listing every run).
      const mode = value['timestamp-mode'];
      const noTimestamp =
        mode === undefined ||
        mode === 'none' ||
        (typeof mode === 'object' && mode !== null && 'none' in mode);
      if (noTimestamp) {
        const fix =
          'set timestamp-mode: last-modified (the time the store reports) or timestamp-mode: {object-name-pattern: ...}';
        if (value['maximum-age'])
          ctx.addIssue({
            code: 'custom',
            path: ['maximum-age'],
            message: `compares each object's timestamp, and timestamp-mode is none: ${fix}`,
          });
        const schedule = value.trigger?.interval ? 'interval' : 'cron';
        if (value.trigger?.[schedule]?.window)
          ctx.addIssue({
            code: 'custom',
            path: ['trigger', schedule, 'window'],
            message: `reads the objects whose timestamp falls in each window, and timestamp-mode is none: ${fix}`,
          });
      }
      if (value.notifications) {
        if (value.mode === 'download-objects')
          ctx.addIssue({
            code: 'custom',
            path: ['notifications'],
            message:
              'reads the objects notifications name; mode download-objects reads named objects only: remove one',
          });
        if (value.fingerprinting !== true)
          ctx.addIssue({
            code: 'custom',
            path: ['fingerprinting'],
            message:
              'must be true with notifications: a notification may come more than once, and fingerprints make each object version read once',
          });
      }
      // The seed has the bucket twice; two different buckets are a mistake, not a choice.
      const url = value.credentials?.['storage-url'];
      const bucket = value['bucket-name'];
      if (typeof url !== 'string' || typeof bucket !== 'string' || /\{\{|\$\{/.test(url + bucket)) return;
      // A bucket-name that is not a bucket name is reported as such; `use gs://<it>` would mislead.
      if (!BUCKET_NAME.test(bucket)) return;
      const named = url.slice('gs://'.length).split('/')[0];
      if (named !== bucket) {
        ctx.addIssue({
          code: 'custom',
          path: ['credentials', 'storage-url'],
          message: `names bucket ${named} but bucket-name is ${bucket}; use gs://${bucket}`,
        });
      }
    })
    .describe(
      'Reads objects from a Cloud Storage bucket. Categories: Block Store, Cloud. Payload kinds: binary, json, raw.',
    );
}

/**
 * Why a storage-url is refused: a URL of the right form may still name something that is
 * not a bucket (`gs://pq`: too short), and then that is what is wrong with it.
 */
function storageUrlProblem(url: string): string {
  const named = STORAGE_URL_FORM.exec(url)?.[1];
  if (named !== undefined && !BUCKET_NAME.test(named))
    return `names \`${named}\`, which is not a bucket name: ${BUCKET_NAME_RULE}`;
  return 'must be gs:// followed by the bucket alone, e.g. gs://my-bucket; to read only some objects, give their prefix in object-names';
}
