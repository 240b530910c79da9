/**
 * The `file` output: appends NDJSON to a file of the machine that runs the job. For
 * `sluice job run` and self-hosted workers; refused on the `cloud` worker. A job kept in
 * the control plane names a path relative to the worker's data folder (`sluice worker run
 * --data-dir`), never an absolute one or one that climbs out (`..`).
 */
import { z } from 'zod';
import type { Fields } from '../fields.ts';
import { byteSizeField } from './batching.ts';

/** Why a path cannot be one of a job kept in the control plane, or undefined. */
export function storedPathProblem(path: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.startsWith('\\'))
    return 'a job saved to the control plane names a path relative to the worker data folder (sluice worker run --data-dir), not an absolute one';
  if (path.split(/[\\/]/).includes('..')) return 'may not climb out of the worker data folder (`..`)';
  if (path.includes('\u0000')) return 'may not contain NUL';
  return undefined;
}

export function fileOutputSchema(f: Fields) {
  return f
    .strict(
      {
        path: f.typed(
          z
            .string()
            .min(1)
            .superRefine((path, ctx) => {
              if (f.level !== 'stored') return;
              const problem = storedPathProblem(path);
              if (problem) ctx.addIssue({ code: 'custom', message: problem });
            }),
          'The file events are appended to. With `sluice job run`, any path; for a job saved to the control plane, a path relative to the data folder of the worker that runs it (sluice worker run --data-dir); refused on the cloud worker.',
        ),
        'max-file-size': byteSizeField(
          f,
          'When the file reaches this size it is renamed to <path>.<time> and a new one started.',
          1024 ** 4,
        ).default('100MiB'),
      },
      'output.file',
    )
    .describe('Appends events as NDJSON to a file; rotates it by size.');
}
