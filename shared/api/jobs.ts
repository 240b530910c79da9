/**
 * The shapes the `jobs` family answers with, declared once: the routes validate and
 * document them (functions/jobs/routes.ts names them in OpenAPI), and the web UI and the
 * CLI take their types from here instead of restating them.
 */
import { z } from 'zod';

export const DeploymentView = z.object({
  worker: z.string(),
  state: z.string(),
  version: z.number(),
  updated_at: z.string(),
  error: z
    .string()
    .optional()
    .describe(
      'Why the deployment cannot run, as its worker reported it (secret values replaced by their names), at most 2,000 characters (a longer reason is cut and ends with `…`). Only on a `failed` deployment, and only when its worker gave a reason; withheld from viewers.',
    ),
  withheld: z
    .array(z.string())
    .optional()
    .describe(
      "For a viewer, the fields withheld (`error`: it quotes what the job read or was answered, as an event's `error` does); operators see them.",
    ),
});

export const JobSummary = z.object({
  name: z.string(),
  version: z.number(),
  state: z.enum(['saved', 'staged', 'deployed']),
  staged_version: z.number().nullable(),
  deployments: z.array(DeploymentView),
  updated_at: z.string(),
  output_kind: z
    .string()
    .nullable()
    .describe(
      'The output kind the saved definition names (its one `output` key, e.g. `gcs`); null when it names none.',
    ),
});

export const JobView = JobSummary.extend({ definition: z.record(z.string(), z.unknown()) });

export const SavedJob = z.object({
  name: z.string(),
  version: z.number(),
  updated_at: z.string(),
  definition: z.record(z.string(), z.unknown()),
});

export type DeploymentView = z.infer<typeof DeploymentView>;
export type JobSummary = z.infer<typeof JobSummary>;
export type JobView = z.infer<typeof JobView>;
export type SavedJob = z.infer<typeof SavedJob>;
