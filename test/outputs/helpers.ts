/**
 * Running a job from a YAML-ish object with the real runner, collecting its reports and
 * what `print` would have written.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../../functions/runner/runner.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import type { Output, RunReport } from '../../functions/runner/types.ts';
import { validateJob } from '../../shared/job/validate.ts';

export interface JobResult {
  reports: RunReport[];
  error?: Error;
  metrics: Record<string, unknown>[];
}

const silentPrint: Output = { async write() {}, async close() {} };

export async function runDefinition(
  definition: Record<string, unknown>,
  options: { stateDir?: string; stored?: boolean; dataDir?: string; signal?: AbortSignal } = {},
): Promise<JobResult> {
  const checked = validateJob(definition, { level: 'rendered' });
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  const reports: RunReport[] = [];
  let error: Error | undefined;
  try {
    await runJob(checked.job, {
      worker: 'test',
      output: silentPrint,
      ...fileStores(options.stateDir ?? mkdtempSync(join(tmpdir(), 'sluice-outputs-'))),
      signal: options.signal ?? new AbortController().signal,
      report: (r) => reports.push(r),
      ...(options.stored ? { stored: true } : {}),
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    });
  } catch (err) {
    error = err as Error;
  }
  return {
    reports,
    metrics: reports.filter((r) => r.type === 'job-metrics' && r.payload.output).map((r) => r.payload),
    ...(error ? { error } : {}),
  };
}
