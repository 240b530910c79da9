// biome-ignore-all lint/suspicious/noTemplateCurlyInString: terraform's ${...} interpolations are literal text here
/**
 * The deployment's hardening checks of `npm run check:deploy` (timeouts, Pub/Sub publishers,
 * the build's storage access, TLS and the UI bucket, secrets per function, the relay's
 * signature): each passes on terraform/ as it is and fails on the mistake it is there to catch.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { entryTable } from '../../functions/entry/table.ts';
import {
  checkBuildAccount,
  checkPublicEdge,
  checkPublishers,
  checkRelayHandler,
  checkSecretMounts,
  checkTimeouts,
  functionSetting,
  loadTerraform,
  longRequestFamilies,
  secretsReadByBundles,
  type Terraform,
} from '../../scripts/check-deploy.ts';

// biome-ignore lint/suspicious/noExplicitAny: terraform parsed to JSON, walked freely
type Json = Record<string, any>;

const fnConfig = (tf: Terraform): Json =>
  tf.resource.google_cloudfunctions2_function!.fn![0].service_config[0];
const functions = (tf: Terraform): Record<string, Json> => tf.locals.functions as Record<string, Json>;

describe('check:deploy hardening', () => {
  it('keeps the long timeout to the families that hold requests open, and the relay within 540 s', async () => {
    const entries = await entryTable();
    const long = longRequestFamilies(entries);
    expect(long).toEqual(['worker-api']);
    const tf = await loadTerraform();
    expect(checkTimeouts(tf, long).problems).toEqual([]);
    expect(functionSetting(tf, 'timeout_seconds')?.get('worker-api')).toBe(3600);
    expect(functionSetting(tf, 'timeout_seconds')?.get('event-relay')).toBeLessThanOrEqual(540);

    // The form terraform had before: every function but the tick and the runner at 3600 s.
    fnConfig(tf).timeout_seconds =
      '${each.value.kind == "tasks" ? var.scheduled_timeout_seconds : each.value.kind == "runs" ? var.runner_timeout_seconds : 3600}';
    const problems = checkTimeouts(tf, long).problems;
    expect(problems).toContain(
      'event-relay (event-triggered) has a timeout of 3600 s; event-driven functions allow at most 540 s',
    );
    expect(problems).toContain(
      'jobs has a timeout of 3600 s but holds no request open: give it at most 300 s (local.timeouts)',
    );
    expect(problems.some((p) => p.startsWith('worker-api'))).toBe(false);

    const fresh = await loadTerraform();
    delete functions(fresh)['worker-api']!.timeout;
    expect(checkTimeouts(fresh, long).problems).toEqual([
      'worker-api holds requests open (long polls, streams) and needs 3600 s, not 60 s',
    ]);
  });

  it('lets the runner and the relay publish to their own topics only, with no project-wide Pub/Sub role', async () => {
    const tf = await loadTerraform();
    expect(checkPublishers(tf).problems).toEqual([]);
    (tf.locals.project_roles.runner.roles as string[]).push('roles/pubsub.subscriber');
    delete tf.resource.google_pubsub_topic_iam_member!.runner_requests_runs;
    tf.resource.google_pubsub_topic_iam_member!.relay_publishes_worker_messages[0].topic =
      '${google_pubsub_topic.runs.name}';
    expect(checkPublishers(tf).problems).toEqual([
      'local.project_roles.runner grants roles/pubsub.subscriber: runner may hold no project-wide Pub/Sub role',
      'runner publishes to sluice-runs but no google_pubsub_topic_iam_member lets it',
      'google_pubsub_topic_iam_member.relay_publishes_worker_messages lets relay publish to sluice-runs, which it never does',
      'relay publishes to sluice-worker-messages but no google_pubsub_topic_iam_member lets it',
    ]);
  });

  it('lets the build read the function sources only', async () => {
    const tf = await loadTerraform();
    expect(checkBuildAccount(tf).problems).toEqual([]);
    (tf.locals.project_roles.build.roles as string[]).push('roles/storage.objectViewer');
    delete tf.resource.google_project_iam_member!.build_reads_sources[0].condition;
    expect(checkBuildAccount(tf).problems).toEqual([
      'local.project_roles.build grants roles/storage.objectViewer on every bucket of the project',
      'google_project_iam_member.build_reads_sources gives the build roles/storage.objectViewer on every bucket',
    ]);
  });

  it('asks for TLS 1.2 at least and a public grant that cannot list the UI bucket', async () => {
    const tf = await loadTerraform();
    expect(checkPublicEdge(tf).problems).toEqual([]);
    tf.resource.google_compute_ssl_policy!.api[0].min_tls_version = 'TLS_1_0';
    tf.resource.google_storage_bucket_iam_member!.web_public[0].role = 'roles/storage.objectViewer';
    expect(checkPublicEdge(tf).problems).toEqual([
      'google_compute_ssl_policy.api accepts TLS_1_0; the minimum must be TLS_1_2',
      'google_storage_bucket_iam_member.web_public gives the public roles/storage.objectViewer; roles/storage.legacyObjectReader reads objects without listing the bucket',
    ]);
    delete tf.resource.google_compute_target_https_proxy!.api[0].ssl_policy;
    expect(checkPublicEdge(tf).problems[0]).toBe(
      'google_compute_target_https_proxy.api has no ssl_policy: TLS 1.0 and 1.1 are accepted',
    );
  });

  describe('secrets per function', () => {
    let reads: Map<string, string[]>;
    beforeAll(async () => {
      reads = await secretsReadByBundles(await entryTable());
    }, 60_000);

    it('reads which secrets each bundle uses', () => {
      expect(reads.get('health')).toEqual([]);
      expect(reads.get('event-relay')).toEqual([]);
      expect(reads.get('scheduled')).toEqual([]);
      expect(reads.get('runner')).toEqual(['SLUICE_SECRETS_KEY']);
      expect(reads.get('tokens')).toEqual(['SLUICE_SIGNING_KEY', 'SLUICE_PREVIOUS_SIGNING_KEYS']);
      expect(reads.get('worker-api')).toEqual([
        'SLUICE_SIGNING_KEY',
        'SLUICE_PREVIOUS_SIGNING_KEYS',
        'SLUICE_SECRETS_KEY',
      ]);
    });

    it('gives each function exactly those, and the relay an identity that reads none', async () => {
      const tf = await loadTerraform();
      expect(checkSecretMounts(tf, reads).problems).toEqual([]);
      functions(tf).health!.secrets = ['signing'];
      functions(tf).jobs!.secrets = ['signing'];
      expect(checkSecretMounts(tf, reads).problems).toEqual([
        'health is given SLUICE_PREVIOUS_SIGNING_KEYS, SLUICE_SIGNING_KEY, which its code never reads (local.functions secrets)',
        'jobs reads SLUICE_SECRETS_KEY, which terraform does not give it',
      ]);

      const relayAsApi = await loadTerraform();
      relayAsApi.locals.service_accounts.relay = '${google_service_account.api.email}';
      expect(checkSecretMounts(relayAsApi, reads).problems).toEqual([
        'event-relay runs as api: give the relay a service account of its own',
      ]);

      const noGrant = await loadTerraform();
      noGrant.locals.runner_secret_ids = {};
      expect(checkSecretMounts(noGrant, reads).problems).toEqual([
        'runner is given SLUICE_SECRETS_KEY but its account (runner) may not read ${google_secret_manager_secret.secrets_key.secret_id}',
      ]);
    });
  });

  it('needs the relay registered as an HTTP function under the entry point', async () => {
    const tf = await loadTerraform();
    expect((await checkRelayHandler(tf)).problems).toEqual([]);
    tf.resource.google_cloudfunctions2_function!.fn![0].build_config[0].entry_point = 'main';
    expect((await checkRelayHandler(tf)).problems).toEqual([
      'relayFunction() does not register an HTTP function "main" with the Functions Framework (it registered http handler)',
    ]);
  });
});
