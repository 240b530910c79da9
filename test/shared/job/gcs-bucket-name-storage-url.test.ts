/**
 * A bucket name that is not one (`pq`: too short) written in both places the gcs input
 * names its bucket, as `sluice job validate` reports it: each place says that the name is
 * not a bucket name, and nothing suggests a different URL form or an invalid bucket.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateErrorLines } from '../../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-bucket-name-'));
const RULE = '3-63 lowercase letters, digits, dashes, dots or underscores';

function gcsJob(name: string, bucketName: string, storageUrl: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      'name: j',
      'input:',
      '  gcs:',
      `    bucket-name: ${bucketName}`,
      '    object-names: []',
      '    credentials:',
      `      storage-url: ${storageUrl}`,
      'output:',
      '  print: {}',
      '',
    ].join('\n'),
  );
  return file;
}

describe('a bucket name too short, in bucket-name and storage-url', () => {
  it('says at each place that the name is not a bucket name, not that the URL has the wrong form', async () => {
    const file = gcsJob('short.yaml', 'pq', 'gs://pq');
    expect(await validateErrorLines(file)).toEqual({
      code: 1,
      lines: [
        `${file}:7:20: input.gcs.credentials.storage-url: names \`pq\`, which is not a bucket name: ${RULE}`,
        `${file}:4:18: input.gcs.bucket-name: must be a bucket name: ${RULE}`,
      ],
    });
  });

  it('still says a URL with a path has the wrong form', async () => {
    const file = gcsJob('path.yaml', 'pqr', 'gs://pqr/logs');
    expect((await validateErrorLines(file)).lines).toEqual([
      `${file}:7:20: input.gcs.credentials.storage-url: must be gs:// followed by the bucket alone, e.g. gs://my-bucket; to read only some objects, give their prefix in object-names`,
    ]);
  });

  it('does not tell to use gs://<bucket-name> when bucket-name is not a bucket name', async () => {
    const file = gcsJob('short-name.yaml', 'pq', 'gs://pqr');
    expect(await validateErrorLines(file)).toEqual({
      code: 1,
      lines: [`${file}:4:18: input.gcs.bucket-name: must be a bucket name: ${RULE}`],
    });
  });

  it('tells to use gs://<bucket-name> when the URL names another bucket', async () => {
    const file = gcsJob('other.yaml', 'pqr', 'gs://pq');
    expect((await validateErrorLines(file)).lines).toEqual([
      `${file}:7:20: input.gcs.credentials.storage-url: names \`pq\`, which is not a bucket name: ${RULE}`,
      `${file}:7:20: input.gcs.credentials.storage-url: names bucket pq but bucket-name is pqr; use gs://pqr`,
    ]);
  });
});
