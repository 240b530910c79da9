/**
 * Rotation never loses a file: batches that rotate within one millisecond each keep their
 * own rotated file (two renames onto one `<path>.<epoch ms>` overwrote the first, and the
 * run acknowledged the lost lines all the same).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createFileOutput } from '../../functions/runner/outputs/file/index.ts';
import { newOutputMetrics } from '../../functions/runner/types.ts';

it('keeps every line when it rotates many times a millisecond', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-rotate-'));
  const path = join(dir, 'events.ndjson');
  const output = createFileOutput(
    { path, 'max-file-size': '1' } as never,
    { stored: false },
    newOutputMetrics(),
  );
  const batches = 200;
  for (let n = 0; n < batches; n++) await output.write([{ n }]);
  await output.acknowledge?.();
  await output.close?.();
  const files = readdirSync(dir);
  const lines = files.flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean));
  expect(files).toHaveLength(batches);
  expect(lines.map((line) => JSON.parse(line).n).sort((a, b) => a - b)).toEqual(
    Array.from({ length: batches }, (_, n) => n),
  );
  expect(
    files.filter((f) => f !== 'events.ndjson').every((f) => /^events\.ndjson\.\d+(-\d+)?$/.test(f)),
  ).toBe(true);
});
