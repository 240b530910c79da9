/** `sluice job ...`: validate, store, stage, deploy and inspect job definitions. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { DeploymentView, JobSummary } from '../../shared/api/jobs.ts';
import { OUTPUT_METRICS_WINDOW_LABEL, outputKindOf } from '../../shared/events/output-metrics.ts';
import { parseJobYaml } from '../../shared/job/index.ts';
import { hasUnsafeText, terminalText } from '../../shared/terminal-text.ts';
import { CliError } from '../exit-codes.ts';
import { LIMIT_OPTION, listAll } from '../list-pages.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';
import { metricsCell, type RecentOutputMetrics, recentOutputMetrics } from './job-output-metrics.ts';
import { jobRunAction } from './job-run.ts';
import { jobValidateAction, readJobFromStdin, STDIN_NAME } from './job-validate.ts';
import { stageHint } from './stage-hint.ts';

const path = (name: unknown, suffix = '') => `/api/jobs/${encodeURIComponent(name as string)}${suffix}`;

export const jobCommands: CommandGroup = (program, wrap) => {
  const job: Command = program
    .command('job')
    .description('Validate, store, stage and deploy job definitions');
  job
    .command('validate')
    .description('Check job files offline (no server): prints FILE:LINE:COLUMN: path: message per error')
    .argument('<files...>', 'job definition files (YAML or JSON); - reads one from standard input')
    .addHelpText(
      'after',
      '\n- reads a job from standard input, named <stdin> in the messages (a file named - is ./-).\n' +
        'Exit codes: 0 all valid, 1 some invalid, 2 usage.\nExamples:\n  sluice job validate jobs/*.yaml\n  render-job | sluice job validate -',
    )
    .action(
      wrap(async (ctx, files) => await jobValidateAction(ctx.io, files as string[], ctx.globals.output)),
    );

  job
    .command('run')
    .description('Run a job file in the foreground on this machine, without deploying it')
    .argument('[file]', 'the job file (YAML or JSON)')
    .option(
      '--context <key=value...>',
      'context values, JSON when they parse, else strings (several after one --context, or --context repeated)',
    )
    .option('--worker <id>', 'the value of {{worker}} (default: this host name)')
    .option('--state-dir <dir>', 'where fingerprints and high-watermarks are kept', '.sluice/state')
    .addHelpText(
      'after',
      "\nprint output goes to standard output, one JSON event per line; everything else to standard error.\nA gcs input prints each object's events together, objects in listing order (ordered: true), unless the job says ordered: false.\nExample:\n  sluice job run examples/status.yaml --context status_url=https://example.org/health > events.ndjson",
    )
    .action(
      wrap(async (ctx, file, opts) => {
        const options = opts as { context?: string[]; stateDir: string };
        let jobFile = file as string | undefined;
        // `--context a=1 job.yaml`: the list of values took the file too.
        if (jobFile === undefined && !options.context?.at(-1)?.includes('='))
          jobFile = options.context?.pop();
        if (jobFile === undefined)
          throw CliError.usage('missing the job file: sluice job run FILE [--context KEY=VALUE...]');
        await jobRunAction(ctx, jobFile, options);
      }),
    );

  job
    .command('apply')
    .description('Save a job file on the server (created or updated; the YAML is kept as written)')
    .argument('<file>', 'the job file (YAML or JSON); - reads it from standard input')
    .addHelpText(
      'after',
      '\n- reads the job from standard input, named <stdin> in the messages (a file named - is ./-).\n' +
        'Examples:\n  sluice job apply jobs/ingest.yaml\n  envsubst < ingest.tmpl.yaml | sluice job apply -',
    )
    .action(
      wrap(async (ctx, given) => {
        const fromStdin = given === '-';
        const file = fromStdin ? STDIN_NAME : (given as string);
        let text: string;
        if (fromStdin) text = await readJobFromStdin(ctx.io, 'apply');
        else
          try {
            text = await readFile(file, 'utf8');
          } catch (err) {
            throw new CliError(
              `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
            );
          }
        const parsed = parseJobYaml(text);
        if (!parsed.ok) {
          const hints = parsed.errors.map(
            (e) => `${file}:${e.line ?? 1}:${e.column ?? 1}: ${e.path ? `${e.path}: ` : ''}${e.message}`,
          );
          throw new CliError(`${file} is not a valid job (nothing was sent)`, 1, hints);
        }
        const name = parsed.job.name;
        const saved = await (await ctx.api()).put<{ name: string; version: number }>(path(name), {
          body: text,
          contentType: 'application/yaml',
        });
        if (ctx.globals.output === 'table')
          ctx.io.stdout(`job ${terminalText(saved.name)} saved as version ${saved.version}\n`);
        else printResult(ctx.io, saved, ctx.globals.output);
        const hint = await stageHint(await ctx.api(), saved.name, { savedVersion: saved.version });
        if (hint) ctx.io.stderr(hint);
      }),
    );

  job
    .command('ls')
    .description('List jobs with state and deployments')
    .option(...LIMIT_OPTION)
    .action(
      wrap(async (ctx, opts) => {
        const api = await ctx.api();
        const [jobs, metrics] = await Promise.all([
          listAll<JobSummary>(ctx, '/api/jobs', opts),
          recentOutputMetrics(api),
        ]);
        const withOutput = jobs.map(({ output_kind: kind, ...j }) => ({
          ...j,
          output: kind ?? null,
          output_metrics: metricsOf(metrics, j.name, kind),
        }));
        if (!metrics.complete) ctx.io.stderr(partialNote(metrics.since));
        const rows =
          ctx.globals.output === 'table'
            ? withOutput.map((j) => ({
                ...j,
                deployments: j.deployments.map(deploymentCell).join(' '),
                output_metrics: metricsCell(j.output_metrics ?? undefined, !metrics.complete),
              }))
            : withOutput;
        printResult(ctx.io, rows, ctx.globals.output, {
          columns: ['name', 'version', 'state', 'staged_version', 'deployments', 'output', 'output_metrics'],
        });
      }),
    );

  job
    .command('get')
    .argument('<name>')
    .description('Show a job (the YAML as saved with -o yaml)')
    .action(
      wrap(async (ctx, name) => {
        const api = await ctx.api();
        if (ctx.globals.output === 'yaml') {
          // As saved, but anyone who may save a job could have put an escape sequence in it
          // that would retitle or rewrite this terminal: those characters are shown as text.
          const saved = await api.get<string>(path(name), { accept: 'application/yaml' });
          ctx.io.stdout(terminalText(saved));
          if (hasUnsafeText(saved))
            ctx.io.stderr(
              'note: the saved YAML holds control or bidirectional characters; they are escaped above (\\xNN, \\uNNNN), ' +
                `so this is not byte for byte what was saved (GET ${path(name)} with Accept: application/yaml is)\n`,
            );
        } else {
          const [job, metrics] = await Promise.all([
            api.get<{ definition: unknown }>(path(name)),
            recentOutputMetrics(api, { job: name as string }),
          ]);
          const kind = outputKindOf(job.definition);
          const output = {
            kind: kind ?? null,
            window: OUTPUT_METRICS_WINDOW_LABEL,
            metrics: metricsOf(metrics, name as string, kind),
          };
          if (!metrics.complete) ctx.io.stderr(partialNote(metrics.since));
          printResult(
            ctx.io,
            { ...job, output },
            ctx.globals.output === 'table' ? 'yaml' : ctx.globals.output,
          );
        }
      }),
    );

  job
    .command('rm')
    .argument('<name>')
    .description('Delete a job (undeploy it first)')
    .action(
      wrap(async (ctx, name) => {
        await (await ctx.api()).delete(path(name));
        ctx.io.stderr(`deleted job ${name}\n`);
      }),
    );

  job
    .command('stage')
    .argument('<name>')
    .description('Stage the current version and job context; running deployments re-render')
    .action(
      wrap(async (ctx, name) =>
        printResult(ctx.io, await (await ctx.api()).post(path(name, '/stage')), ctx.globals.output),
      ),
    );

  job
    .command('deploy')
    .argument('<name>')
    .requiredOption(
      '-w, --worker <ids>',
      'workers to deploy to, all or nothing (repeat -w, or a,b)',
      workerList,
    )
    .description('Deploy to workers; refused as a whole if it does not render for one of them')
    .action(
      wrap(async (ctx, name, opts) => {
        const answer = await (await ctx.api()).post(path(name, '/deploy'), {
          body: { workers: (opts as { worker: string[] }).worker },
        });
        printResult(ctx.io, (answer as { deployments: unknown }).deployments, ctx.globals.output, {
          columns: ['worker', 'state', 'version', 'updated_at'],
        });
      }),
    );

  job
    .command('undeploy')
    .description('Take a job off its workers (all of them, or those given with --worker)')
    .argument('<name>')
    .option('-w, --worker <ids>', 'only these workers (repeat -w, or a,b; default: all)', workerList)
    .action(
      wrap(async (ctx, name, opts) => {
        const workers = (opts as { worker?: string[] }).worker;
        const answer = await (await ctx.api()).post(path(name, '/undeploy'), {
          body: workers ? { workers } : {},
        });
        printResult(ctx.io, (answer as { deployments: unknown }).deployments, ctx.globals.output, {
          columns: ['worker', 'state', 'version'],
        });
      }),
    );

  job
    .command('render')
    .argument('<name>')
    .requiredOption('-w, --worker <id>', 'the worker to render for', workerList)
    .description('Show the definition a worker would run, and where each context value came from')
    .action(
      wrap(async (ctx, name, opts) => {
        const workers = (opts as { worker: string[] }).worker;
        if (workers.length !== 1)
          throw CliError.usage(
            `render shows one worker at a time, not ${workers.join(', ')}: run it once per worker`,
          );
        const answer = await (await ctx.api()).get(path(name, '/render'), {
          query: { worker: workers[0] },
        });
        printResult(ctx.io, answer, ctx.globals.output === 'table' ? 'yaml' : ctx.globals.output);
      }),
    );
};

/**
 * `-w ID`: one value per `-w`, so the job name may come after it (`job deploy -w cloud NAME`);
 * `-w a -w b` and `-w a,b` both give several.
 */
function workerList(value: string, previous: string[] = []): string[] {
  const ids = value.split(',').map((id) => id.trim());
  if (ids.some((id) => !id)) throw CliError.usage(`-w: "${value}" holds an empty worker id`);
  return [...previous, ...ids];
}

/**
 * A job's output metrics as `job ls -o json` and `job get` show them; when only the newest
 * reports were read, with `partial: true` and `counted_since` (the sums are lower bounds).
 */
function metricsOf(metrics: RecentOutputMetrics, job: string, kind: string | null | undefined) {
  const sum = (kind && metrics.byJob.get(job)?.get(kind)) || null;
  if (!sum || metrics.complete) return sum;
  return { ...sum, partial: true, counted_since: metrics.since };
}

function partialNote(since: string): string {
  return `note: output metrics count only the reports since ${since} (the newest); the ${OUTPUT_METRICS_WINDOW_LABEL} held more than one look reads, so the figures are at least these (≥)\n`;
}

/** The longest reason `job ls` shows beside a failed deployment; `job get` shows it whole. */
const REASON_IN_LIST = 40;

/**
 * One deployment in the `job ls` table: `worker:state`, and a failed one's reason shortened
 * to its first line and REASON_IN_LIST characters, e.g. `cloud:failed (missing variable SUFFIX)`.
 */
export function deploymentCell(d: Pick<DeploymentView, 'worker' | 'state' | 'error'>): string {
  if (!d.error) return `${d.worker}:${d.state}`;
  const reason = d.error.split('\n', 1)[0]!.replace(/\s+/g, ' ').trim();
  const short = reason.length > REASON_IN_LIST ? `${reason.slice(0, REASON_IN_LIST - 1).trimEnd()}…` : reason;
  return `${d.worker}:${d.state} (${short})`;
}
