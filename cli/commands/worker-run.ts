/**
 * `sluice worker run`: this machine becomes a worker. The worker key comes from
 * `SLUICE_WORKER_KEY` or standard input (never an argument); it is exchanged for a
 * short-lived token that is renewed before it expires. Job output goes to standard output.
 * Ctrl-C or SIGTERM stops it at once; a refused key (the worker deleted, or its key
 * rotated) stops its jobs and ends it with exit code 3; another `worker run` of the same
 * worker started later takes it over, and this one stops its jobs and exits 1.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { createPrintOutput } from '../../functions/runner/outputs/print/index.ts';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { apiFingerprints, runWorker, WorkerEnded } from '../../functions/runner/worker-runtime.ts';
import { ApiClient } from '../api-client.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import type { CommandContext } from '../globals.ts';
import { untilInterrupted } from '../interrupt.ts';
import type { CommandGroup } from './index.ts';

const TOKEN_TTL = '1h';
const RENEW_BEFORE_MS = 10 * 60_000;

export async function workerRunAction(
  ctx: CommandContext,
  options: { stateDir: string; dataDir?: string; signal?: AbortSignal },
): Promise<void> {
  const key =
    ctx.env.SLUICE_WORKER_KEY ?? (ctx.io.stdinIsTty ? undefined : (await ctx.io.readStdin()).trim());
  if (!key) throw CliError.usage('no worker key: set SLUICE_WORKER_KEY or pipe the key on standard input');
  const anonymous = new ApiClient({
    server: ctx.globals.server,
    caFile: ctx.globals.caFile,
    insecure: ctx.globals.insecure,
    insecureHttp: ctx.globals.insecureHttp,
  });
  let current: { client: ApiClient; renewAt: number; worker: string } | undefined;
  const api = async () => {
    if (!current || Date.now() > current.renewAt) {
      const answer = await anonymous.post<{ token: string; expires_at: string }>('/api/tokens/create/api', {
        anonymous: true,
        body: { key, ttl: TOKEN_TTL },
      });
      const client = new ApiClient({
        server: ctx.globals.server,
        token: answer.token,
        caFile: ctx.globals.caFile,
        insecure: ctx.globals.insecure,
        insecureHttp: ctx.globals.insecureHttp,
      });
      const me = await client.get<{ subject: string; kind: string }>('/api/auth/me');
      if (me.kind !== 'worker') throw new CliError('that key is not a worker key (slw_...)', 3);
      await current?.client.close();
      current = { client, renewAt: Date.parse(answer.expires_at) - RENEW_BEFORE_MS, worker: me.subject };
    }
    return current.client;
  };
  const dataDir = options.dataDir ?? ctx.env.SLUICE_DATA_DIR;
  await api(); // fail fast on a bad key or an unreachable server
  ctx.io.stderr(`worker ${current!.worker} connected to ${ctx.globals.server}\n`);
  const interrupt = untilInterrupted(options.signal);
  try {
    await runWorker({
      api,
      worker: current!.worker,
      output: createPrintOutput(process.stdout),
      // `file` outputs of deployed jobs write only below this folder (none: they may not write).
      ...(dataDir ? { dataDir: resolve(dataDir) } : {}),
      // Fingerprints are shared through the control plane; high-watermarks stay in the state dir.
      stores: { fingerprints: apiFingerprints(api), watermarks: fileStores(options.stateDir).watermarks },
      signal: interrupt.signal,
      log: (line) => ctx.io.stderr(`${new Date().toISOString()} ${line}\n`),
      apiCodeOf: (err) => (err instanceof CliError ? err.apiCode : undefined),
    });
  } catch (err) {
    if (!(err instanceof WorkerEnded)) throw err;
    const worker = current!.worker;
    const why = (err.cause as Error).message;
    if (err.reason === 'replaced')
      throw new CliError(
        `worker ${worker}: another \`sluice worker run\` took this worker over (${why}); this one stopped its jobs`,
        EXIT.error,
        [
          'One runtime runs a worker at a time, the one started last. To run jobs on two machines, create a worker for each.',
        ],
      );
    throw new CliError(
      `worker ${worker}: the control plane refused its key (${why}); it was deleted or its key was rotated, and its jobs are stopped`,
      EXIT.auth,
      [
        'Run it again with the key `sluice worker rotate-key ID` printed, or `sluice worker create ID` and enroll it again.',
      ],
    );
  } finally {
    interrupt.dispose();
    await current?.client.close();
    await anonymous.close();
  }
}

export const workerRunCommands: CommandGroup = (program, wrap) => {
  const worker = program.commands.find((c: Command) => c.name() === 'worker') ?? program.command('worker');
  worker
    .command('run')
    .description('Run this machine as a worker: key from SLUICE_WORKER_KEY or standard input')
    .option(
      '--state-dir <dir>',
      'where high-watermarks are kept (fingerprints are kept by the control plane)',
      '.sluice/worker-state',
    )
    .option(
      '--data-dir <dir>',
      'the folder file outputs of deployed jobs write in (their paths are relative to it); default SLUICE_DATA_DIR, else none: such jobs fail',
    )
    .addHelpText(
      'after',
      '\nExample:\n  SLUICE_WORKER_KEY=slw_... sluice worker run --server https://sluice.example.com',
    )
    .action(wrap(async (ctx, opts) => await workerRunAction(ctx, opts as { stateDir: string })));
};
