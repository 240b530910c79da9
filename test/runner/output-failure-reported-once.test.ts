/**
 * A failure of the output is reported once, as the output's: `sluice job run` of a gcs job
 * whose `gcs` output names a bucket that does not exist printed the output's `job-errors`
 * and then the same failure again as `{"input":"gcs","bucket":<the input's bucket>}` (and,
 * with `{source}` names, once more as a failed input object), so a missing output bucket
 * looked like a missing input bucket. The run's `job-run-ended` says `failed: true`, also
 * when the output fails only as the run ends (no fingerprints: it said `failed: false`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-output-failure-'));
const SOURCE = 'failure-src';
let gcs: StorageEmulator;

beforeAll(async () => {
  gcs = await startStorageEmulator();
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-output-failure' });
  const [bucket] = await storage.createBucket(SOURCE);
  for (const o of [0, 1, 2])
    await bucket.file(`in/${o}.ndjson`).save(`{"o":${o},"l":0}\n{"o":${o},"l":1}\n`, { resumable: false });
});
afterAll(async () => {
  await gcs?.stop();
});

let jobs = 0;
/** `sluice job run` of a gcs job reading SOURCE into `output`: exit code and the reports it printed. */
function jobRun(output: string, input = '') {
  const file = join(dir, `job-${++jobs}.yaml`);
  writeFileSync(
    file,
    `name: copy\ninput:\n  gcs:\n    bucket-name: ${SOURCE}\n    credentials:\n      storage-url: gs://${SOURCE}\n    object-names: [in/]\n${input}output:\n${output}`,
  );
  return new Promise<{ code: number | null; reports: { type: string; payload: Record<string, unknown> }[] }>(
    (resolve) => {
      const child = spawn(
        process.execPath,
        ['bin/sluice.js', 'job', 'run', file, '--state-dir', join(dir, `state-${jobs}`)],
        { env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.url } },
      );
      let stderr = '';
      child.stdout.resume();
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('close', (code) =>
        resolve({
          code,
          reports: stderr
            .split('\n')
            .filter((line) => /^job-[a-z-]+ \{/.test(line))
            .map((line) => {
              const space = line.indexOf(' ');
              return { type: line.slice(0, space), payload: JSON.parse(line.slice(space + 1)) };
            }),
        }),
      );
    },
  );
}

const missingBucket = (objectName: string) =>
  `  gcs:\n    bucket-name: no-such-bucket\n    object-name: '${objectName}'\n`;

describe('an output that fails', () => {
  for (const [what, output, input] of [
    ['with fingerprints', missingBucket('x/{part}.ndjson'), '    fingerprinting: true\n'],
    ['with names after the source', missingBucket('x/{source}-{part}.ndjson'), ''],
    ['failing only as the run ends', missingBucket('x/{part}.ndjson'), ''],
  ] as const) {
    it(`is reported once, as the output's, and the run ended failed (gcs output ${what})`, async () => {
      const { code, reports } = await jobRun(output, input);
      expect(code).toBe(1);
      expect(reports.filter((r) => r.type === 'job-errors').map((r) => r.payload)).toEqual([
        expect.objectContaining({
          output: 'gcs',
          bucket: 'no-such-bucket',
          reason: expect.stringContaining('bucket does not exist'),
        }),
      ]);
      expect(reports.find((r) => r.type === 'job-run-ended')?.payload).toMatchObject({
        input: 'gcs',
        bucket: SOURCE,
        failed: true,
        failed_objects: 0,
        errors: 0,
      });
    });
  }

  it("is reported once, as the output's, for the file output too", async () => {
    const taken = join(dir, 'a-folder');
    mkdirSync(taken);
    const { code, reports } = await jobRun(`  file:\n    path: ${taken}\n`);
    expect(code).toBe(1);
    expect(reports.filter((r) => r.type === 'job-errors').map((r) => r.payload)).toEqual([
      expect.objectContaining({ output: 'file', reason: expect.stringContaining('EISDIR') }),
    ]);
    expect(reports.find((r) => r.type === 'job-run-ended')?.payload).toMatchObject({ failed: true });
  });
});
