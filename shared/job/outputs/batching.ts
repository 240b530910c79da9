/**
 * Fields that outputs writing in batches share: `max-bytes`, `max-events`, `max-age`
 * (a batch goes out when the first of them is reached), and byte sizes in general.
 */
import { z } from 'zod';
import { formatByteSize, parseByteSize } from '../../byte-size.ts';
import type { Fields } from '../fields.ts';

/** A size field: bytes, or a size such as 512KiB, 16MiB; at most `largest`. */
export function byteSizeField(f: Fields, description: string, largest: number) {
  return f.typed(
    z.union([z.string(), z.number().int().nonnegative()]).superRefine((value, ctx) => {
      try {
        const bytes = parseByteSize(value);
        if (bytes < 1) ctx.addIssue({ code: 'custom', message: 'must be at least 1 byte' });
        if (bytes > largest)
          ctx.addIssue({ code: 'custom', message: `may be at most ${formatByteSize(largest)}` });
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
    `${description} Bytes, or a size such as 512KiB, 16MiB (at most ${formatByteSize(largest)}).`,
  );
}

export interface BatchingDefaults {
  maxBytes: string;
  largestBytes: number;
  maxEvents: number;
  maxAge: string;
}

/** `max-bytes`, `max-events`, `max-age`, with the output's defaults. */
export function batchingFields(f: Fields, defaults: BatchingDefaults) {
  return {
    'max-bytes': byteSizeField(
      f,
      'A batch goes out once it holds this many bytes (before compression).',
      defaults.largestBytes,
    ).default(defaults.maxBytes),
    'max-events': f
      .integer('A batch goes out once it holds this many events.', 1)
      .default(defaults.maxEvents),
    'max-age': f
      .duration('A batch goes out at the latest this long after its first event.')
      .default(defaults.maxAge),
  };
}
