/**
 * The shapes the `workers` family answers with, declared once for the routes, the worker
 * registry (functions/workers/registry.ts), the web UI and the CLI.
 */
import { z } from 'zod';

export const WorkerView = z.object({
  id: z.string(),
  labels: z.record(z.string(), z.string()),
  state: z.enum(['online', 'offline']),
  last_seen: z.string().nullable(),
  built_in: z.boolean(),
  jobs: z.array(z.string()),
  created_at: z.string().nullable(),
});

export const WorkerKey = z.object({ id: z.string(), key: z.string() });

export type WorkerView = z.infer<typeof WorkerView>;
export type WorkerKey = z.infer<typeof WorkerKey>;
