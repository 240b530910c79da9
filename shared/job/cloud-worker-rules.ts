/**
 * What a job must bring to run on the built-in `cloud` worker. That worker runs every
 * tenant's jobs inside the control plane's own `runner` function, so a job there may not
 * borrow the function's identity (a `gcs` job without credentials would read buckets as
 * the runner's service account, other tenants' included) nor read the function's files
 * (a credentials `path`), nor write them (the `file` output). The `gcs` and `pubsub`
 * outputs need their own key like the `gcs` input. Checked when a job is deployed or staged to `cloud` (400) and
 * again by the cloud worker before each run (a job stored before these rules existed).
 *
 * @example
 *   const problems = cloudWorkerProblems(definition);
 *   if (problems.length) throw ApiError.invalid(problems[0].message, problems);
 */
import type { ErrorDetail } from '../errors.ts';

type Credentials = Record<string, { path?: unknown; key?: unknown } | undefined>;

export function cloudWorkerProblems(definition: { input?: unknown; output?: unknown }): ErrorDetail[] {
  const input = (definition.input ?? {}) as Record<string, unknown>;
  const output = (definition.output ?? {}) as Record<string, unknown>;
  const problems: ErrorDetail[] = [
    ...messageTriggerProblems(input),
    ...credentialProblems(input.gcs, 'input.gcs', 'a gcs job'),
    ...credentialProblems(output.gcs, 'output.gcs', 'a gcs output'),
    ...credentialProblems(output.pubsub, 'output.pubsub', 'a pubsub output'),
  ];
  // The cloud worker's files are the control plane's own: no job reads or writes them.
  if (output.file !== undefined) {
    problems.push({
      path: 'output.file',
      message:
        'the cloud worker does not write files; use the gcs output (or deploy the job to a worker of your own, where file writes below its data folder)',
    });
  }
  return problems;
}

/** The `cloud` worker runs on a clock and receives no worker messages: a message trigger would never fire. */
function messageTriggerProblems(input: Record<string, unknown>): ErrorDetail[] {
  return Object.entries(input)
    .filter(
      ([, kind]) => (kind as { trigger?: { message?: unknown } } | undefined)?.trigger?.message !== undefined,
    )
    .map(([kind]) => ({
      path: `input.${kind}.trigger.message`,
      message:
        'message-triggered jobs run on workers that receive messages, not on the cloud worker: deploy this job to a worker running `sluice worker run` (or `local`)',
    }));
}

/**
 * A notified `gcs` input without a trigger reads until it is stopped on a worker of its
 * own; the cloud worker runs it when its notifications come instead (functions/runs/wake.ts:
 * a push of the bucket's topic requests a run, which reads what is waiting and ends when
 * quiet). Such a job is "woken", and needs no trigger there.
 */
export function wokenByNotifications(definition: { input?: unknown }): boolean {
  const gcs = (definition.input as { gcs?: { notifications?: unknown; trigger?: unknown } } | undefined)?.gcs;
  return Boolean(gcs?.notifications) && gcs?.trigger === undefined;
}

/** A component that reaches Google must bring its own key, not a file and not the function's identity. */
function credentialProblems(component: unknown, where: string, what: string): ErrorDetail[] {
  if (!component || typeof component !== 'object') return [];
  const credentials = ((component as { credentials?: Credentials }).credentials ?? {}) as Credentials;
  const problems: ErrorDetail[] = [];
  const sources = (['service-account', 'application-credentials'] as const).filter(
    (name) => credentials[name] !== undefined,
  );
  if (sources.length === 0) {
    problems.push({
      path: `${where}.credentials`,
      message: `${what} on the cloud worker needs its own credentials (service-account.key, best from a secret: \${secret|gcp/key}); the cloud worker does not lend its own identity to jobs`,
    });
  }
  for (const name of sources) {
    if (credentials[name]?.path !== undefined) {
      problems.push({
        path: `${where}.credentials.${name}.path`,
        message: 'the cloud worker does not read credential files; put the key in `key`',
      });
    }
  }
  return problems;
}
