/**
 * How a job names a Google identity: `credentials.service-account` or
 * `credentials.application-credentials`, each a `path` (a file; `sluice job run` only,
 * refused at the `stored` level) or a `key` (a service-account key as JSON, checked by
 * `parseServiceAccountKey`). Declared once, used by the `gcs` input and the `gcs` and
 * `pubsub` outputs, so that every component that reaches Google follows the same rules.
 *
 * @example
 *   const credentials = googleCredentialsSchema(f, 'output.gcs.credentials');
 */
import type { z } from 'zod';
import { exactlyOne, type Fields } from './fields.ts';
import { parseServiceAccountKey, resolvedLater } from './inputs/gcs-credentials.ts';

/** One identity source: `path` or `key`. */
export function googleKeySchema(f: Fields, what: string) {
  return f
    .strict(
      {
        path: f
          .string(
            `Location of the ${what} file on the machine that runs the job. Only for \`sluice job run\` on your own machine: a job saved to the control plane may not name a file (400).`,
          )
          .optional(),
        key: f
          .string(
            `The key itself, as JSON: a service-account key (\`"type": "service_account"\`; other kinds of credentials are refused), best from a secret: \`\${secret|gcp/key}\`. Required on the cloud worker.`,
          )
          .optional(),
      },
      `credentials.${what}`,
    )
    .superRefine(exactlyOne(`credentials.${what}`, ['path', 'key']))
    .check(
      // Rendering does not check this again: at the stored level no whole `{{...}}` reference
      // may stand for these credentials, or anything holding them (fields.ts storedRule).
      f.storedRule<{ path?: string }>(
        `it could bring in a credentials \`path\`, a file of the machine that runs the job, which only saving refuses; write the map out and reference the values inside it, e.g. key: '{{sa_key}}' or key: \${secret|gcp/key}`,
        (value, ctx) => {
          if (value.path === undefined) return;
          ctx.addIssue({
            code: 'custom',
            path: ['path'],
            message: `a job saved to the control plane may not name a file of the machine that runs it; put the key in \`key\` (from a secret: key: \${secret|gcp/key})`,
          });
        },
      ),
    )
    .superRefine((value, ctx) => {
      if (typeof value.key === 'string' && !resolvedLater(value.key)) {
        const parsed = parseServiceAccountKey(value.key);
        if (!parsed.ok) ctx.addIssue({ code: 'custom', path: ['key'], message: parsed.message });
      }
    })
    .describe(
      `Either \`path\` (a file; \`sluice job run\` only) or \`key\` (a service-account key as JSON).`,
    );
}

/**
 * `credentials`: service-account or application-credentials (or neither: the machine's
 * identity), plus the component's own fields (`extra`: the gcs input's `storage-url`).
 */
export function googleCredentialsSchema<Extra extends z.ZodRawShape = Record<never, never>>(
  f: Fields,
  where: string,
  options: { extra?: Extra; description?: string } = {},
) {
  return f
    .strict(
      {
        ...(options.extra ?? ({} as Extra)),
        'service-account': googleKeySchema(f, 'service-account').optional(),
        'application-credentials': googleKeySchema(f, 'application-credentials').optional(),
      },
      where,
    )
    .superRefine((value, ctx) => {
      const given = value as { 'service-account'?: unknown; 'application-credentials'?: unknown };
      if (given['service-account'] && given['application-credentials']) {
        ctx.addIssue({
          code: 'custom',
          message: 'credentials take service-account or application-credentials, not both',
        });
      }
    })
    .describe(
      options.description ??
        'The identity to act as. Without service-account or application-credentials the job runs with the identity of the machine that runs it; the cloud worker refuses that (deploy a job with a key to it).',
    );
}
