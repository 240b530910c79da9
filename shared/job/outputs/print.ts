/** The `print` output: one JSON event per line on standard output. Takes an empty map. */
import { z } from 'zod';
import type { Fields } from '../fields.ts';

export function printOutputSchema(f: Fields) {
  return z
    .union([z.null(), f.strict({}, 'output.print')])
    .transform(() => ({}))
    .describe('Writes each event as one line of JSON to standard output. Takes an empty map.');
}
