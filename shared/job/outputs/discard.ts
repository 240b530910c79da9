/** The `discard` output: counts events and drops them (benchmarks, dry runs). Takes an empty map. */
import { z } from 'zod';
import type { Fields } from '../fields.ts';

export function discardOutputSchema(f: Fields) {
  return z
    .union([z.null(), f.strict({}, 'output.discard')])
    .transform(() => ({}))
    .describe(
      'Counts events (in job-metrics) and drops them: for benchmarks and dry runs. Takes an empty map.',
    );
}
