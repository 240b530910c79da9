/**
 * `actions` as a rendered job validates them, so that a test's chain only ever sees valid ones.
 *
 * @example
 *   const chain = compileActionChain(validActions([{ filter: 'event.a > 1' }]));
 */
import type { Action } from '../../shared/job/actions/schema.ts';
import { validateJob } from '../../shared/job/validate.ts';

export function validActions(list: unknown[]): Action[] {
  const result = validateJob(
    {
      name: 't',
      input: {
        gcs: { 'bucket-name': 'b-1', credentials: { 'storage-url': 'gs://b-1' }, 'object-names': ['x/'] },
      },
      actions: list,
      output: { discard: {} },
    },
    { level: 'rendered' },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.job.actions!;
}
