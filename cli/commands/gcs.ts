/**
 * `sluice gcs notify BUCKET --job NAME`: sets up what a `gcs` input with
 * `notifications: {subscription}` reads (cli/gcs-notify.ts), with the operator's Google
 * credentials (Application Default Credentials, as gcloud and terraform use), and prints
 * the subscription to put into the job.
 */
import { Option } from 'commander';
import {
  BUCKET_NAME,
  PROJECT_ID,
  PROJECT_ID_RULE,
  PUBSUB_NAME,
  PUBSUB_NAME_RULE,
} from '../../shared/job/inputs/gcs.ts';
import { JOB_NAME } from '../../shared/job/schema.ts';
import { CliError } from '../exit-codes.ts';
import { NotifySetupError, setUpBucketNotifications, type WakeRequest } from '../gcs-notify.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

export const gcsCommands: CommandGroup = (program, wrap) => {
  const gcs = program.command('gcs').description('Cloud Storage set-up for gcs inputs');
  gcs
    .command('notify')
    .argument('<bucket>', 'the bucket whose new objects the job reads')
    .addOption(
      new Option(
        '--job <name>',
        'the job that reads them (names the topic and subscription)',
      ).makeOptionMandatory(),
    )
    .option('--project <id>', 'project of the topic and subscription (default: $GOOGLE_CLOUD_PROJECT)')
    .option('--prefix <prefix>', 'only objects whose names start with it')
    .option('--name <name>', 'topic and subscription name (default: sluice-gcs-<bucket>-<job>)')
    .option(
      '--wake <runner-url>',
      'for a job without a trigger on the cloud worker: also push each notification to the runner function (terraform output runner_url; on the local stack http://127.0.0.1:8444), which wakes the job',
    )
    .option('--tenant <id>', 'with --wake: the tenant the job belongs to')
    .option(
      '--push-service-account <email>',
      'with --wake: the identity the pushes carry (terraform output run_push_service_account)',
    )
    .description(
      "Create a Pub/Sub topic and subscription for a bucket's new objects, let Cloud Storage publish to it, and add the bucket's notification config (idempotent)",
    )
    .action(
      wrap(async (ctx, bucket, options) => {
        const {
          job,
          project: given,
          prefix,
          name: chosen,
          wake: runnerUrl,
          tenant,
          pushServiceAccount,
        } = options as {
          job: string;
          project?: string;
          prefix?: string;
          name?: string;
          wake?: string;
          tenant?: string;
          pushServiceAccount?: string;
        };
        if (!BUCKET_NAME.test(bucket as string))
          throw CliError.usage(`"${bucket}" is not a bucket name (3-63 lowercase letters, digits, - _ .)`);
        if (!JOB_NAME.test(job)) throw CliError.usage(`"${job}" is not a job name`);
        // The bucket in the name: two jobs of one name (in two tenants) reading two buckets
        // must not share a subscription, or each would take, and drop, the other's messages.
        const name = chosen ?? `sluice-gcs-${bucket}-${job}`.slice(0, 255);
        // The job names the subscription with the rules it is checked by (shared/job/inputs/gcs.ts).
        if (!PUBSUB_NAME.test(name))
          throw CliError.usage(`"${name}" is not a Pub/Sub name (${PUBSUB_NAME_RULE})`);
        const wake = wakeRequest(job, runnerUrl, tenant, pushServiceAccount);
        const project = given ?? ctx.env.GOOGLE_CLOUD_PROJECT ?? ctx.env.PUBSUB_PROJECT_ID;
        if (!project)
          throw CliError.usage('which project? pass --project PROJECT_ID (or set GOOGLE_CLOUD_PROJECT)');
        if (!PROJECT_ID.test(project)) {
          const from =
            given !== undefined
              ? ''
              : ctx.env.GOOGLE_CLOUD_PROJECT
                ? ' (GOOGLE_CLOUD_PROJECT)'
                : ' (PUBSUB_PROJECT_ID)';
          throw CliError.usage(
            `"${project}"${from} is not a project ID the job's notifications.subscription takes (${PROJECT_ID_RULE}): the subscription made would be refused`,
          );
        }
        // Half on emulators would make real topics for a bucket that is not real, or the reverse.
        if (!ctx.env.STORAGE_EMULATOR_HOST !== !ctx.env.PUBSUB_EMULATOR_HOST)
          throw CliError.usage(
            `${ctx.env.STORAGE_EMULATOR_HOST ? 'STORAGE_EMULATOR_HOST' : 'PUBSUB_EMULATOR_HOST'} is set but ${ctx.env.STORAGE_EMULATOR_HOST ? 'PUBSUB_EMULATOR_HOST' : 'STORAGE_EMULATOR_HOST'} is not: set both (the emulators, as npm start prints them) or neither (Google Cloud)`,
          );
        ctx.io.stderr(`setting up notifications of gs://${bucket} for job ${job}...\n`);
        const [{ Storage }, { PubSub }] = await Promise.all([
          import('@google-cloud/storage'),
          import('@google-cloud/pubsub'),
        ]);
        const emulator = ctx.env.STORAGE_EMULATOR_HOST;
        // Emulators need no credentials: without this the auth library looks for a metadata
        // server first, and warns twice that there is none.
        if (emulator) process.env.METADATA_SERVER_DETECTION ??= 'none';
        const storage = new Storage({
          projectId: project,
          ...(emulator
            ? { apiEndpoint: /^https?:\/\//.test(emulator) ? emulator : `http://${emulator}` }
            : {}),
        });
        const pubsub = new PubSub({ projectId: project });
        try {
          const setup = await setUpBucketNotifications(
            {
              bucket: bucket as string,
              name,
              project,
              ...(prefix ? { prefix } : {}),
              ...(wake ? { wake } : {}),
            },
            { storage, pubsub },
            { env: ctx.env, onWait: (message) => ctx.io.stderr(`${message}\n`) },
          );
          printResult(ctx.io, setup, ctx.globals.output);
          for (const warning of setup.warnings) ctx.io.stderr(`warning: ${warning}\n`);
          ctx.io.stderr(
            `${setup.created.length ? `created: ${setup.created.join(', ')}` : setup.updated.length ? 'the rest was set up already' : 'everything was set up already'}\n${setup.updated.length ? `updated: ${setup.updated.join(', ')}\n` : ''}add to the job's gcs input (fingerprinting: true is needed too):\n  notifications:\n    subscription: ${setup.subscription}\n${setup.wakeSubscription ? `each notification also wakes job ${job} on the cloud worker (through ${setup.wakeSubscription})\n` : ''}`,
          );
        } catch (err) {
          if (!(err instanceof NotifySetupError)) throw err;
          throw new CliError(`could not set up notifications: ${err.message}`, 1, [
            ...(err.created.length
              ? [
                  `made before it stopped: ${err.created.join(', ')} (kept: running the command again goes on from there)`,
                ]
              : []),
            nextStep(err.cause, project),
          ]);
        } finally {
          await pubsub.close().catch(() => {});
        }
      }),
    );
};

/** What to do about the error that stopped the set-up. */
function nextStep(cause: unknown, project: string): string {
  const { code, message = '' } = (cause ?? {}) as { code?: unknown; message?: string };
  if (/default credentials|invalid_grant|reauth/i.test(message))
    return 'set Application Default Credentials (gcloud auth application-default login) and run the command again';
  if (code === 403 || code === 7)
    return `your account needs to manage Pub/Sub in project ${project} (roles/pubsub.admin) and the bucket's notifications (roles/storage.admin on the bucket)`;
  return 'fix what the message says and run the command again';
}

/** The wake options, checked together: all or none of URL and tenant. */
function wakeRequest(
  job: string,
  runnerUrl: string | undefined,
  tenant: string | undefined,
  serviceAccount: string | undefined,
): WakeRequest | undefined {
  if (runnerUrl === undefined) {
    if (tenant !== undefined || serviceAccount !== undefined)
      throw CliError.usage('--tenant and --push-service-account go with --wake RUNNER_URL');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(runnerUrl);
  } catch {
    throw CliError.usage(
      `--wake: "${runnerUrl}" is not a URL (the runner function's, terraform output runner_url)`,
    );
  }
  if (url.protocol !== 'https:' && url.hostname !== 'localhost' && url.hostname !== '127.0.0.1')
    throw CliError.usage('--wake: the runner URL must be https (Pub/Sub pushes with a token)');
  if (url.search || url.username || url.password)
    throw CliError.usage('--wake: give the runner URL without a query or credentials');
  if (!tenant) throw CliError.usage('--wake needs --tenant ID (the tenant the job belongs to)');
  return { runnerUrl, tenant, job, ...(serviceAccount ? { serviceAccount } : {}) };
}
