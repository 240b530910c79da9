/**
 * `sluice context get|set|export|import|resolve` (admin): the context maps of
 * CONTRACT section 2 from the command line.
 */

import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CONTEXT_FILE_FORMAT } from '../../shared/context/context-file.ts';
import { CliError } from '../exit-codes.ts';
import type { CommandContext } from '../globals.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

type Target = { kind: 'global' } | { kind: 'worker' | 'job'; id: string };

function target(scope: string, id: string | undefined): Target {
  if (scope === 'global') {
    if (id !== undefined) throw CliError.usage('`global` takes no name');
    return { kind: 'global' };
  }
  if (scope !== 'worker' && scope !== 'job')
    throw CliError.usage(`scope must be global, worker or job, not "${scope}"`);
  if (!id) throw CliError.usage(`${scope} needs a name: sluice context ... ${scope} NAME`);
  return { kind: scope, id };
}

/** `KEY=VALUE`: VALUE is JSON when it parses, else a string. */
export function parseAssignment(text: string): [string, unknown] {
  const at = text.indexOf('=');
  if (at < 1) throw CliError.usage(`expected KEY=VALUE, got "${text}"`);
  const raw = text.slice(at + 1);
  try {
    return [text.slice(0, at), JSON.parse(raw)];
  } catch {
    return [text.slice(0, at), raw];
  }
}

async function readPath(ctx: CommandContext, t: Target): Promise<unknown> {
  const api = await ctx.api();
  if (t.kind === 'global') return await api.get('/api/contexts/global');
  return await api.get(`/api/contexts/${t.kind}/${encodeURIComponent(t.id)}`);
}

export const contextCommands: CommandGroup = (program, wrap) => {
  const context: Command = program
    .command('context')
    .description('Context values resolved into jobs (admin)');

  context
    .command('get')
    .description('Show a context map: global, worker W or job J')
    .argument('<scope>', 'global | worker | job')
    .argument('[name]', 'worker id or job name')
    .action(
      wrap(async (ctx, scope, name) => {
        const map = await readPath(ctx, target(scope as string, name as string | undefined));
        printResult(ctx.io, map, ctx.globals.output);
      }),
    );

  context
    .command('set')
    .description('Set keys (merge); VALUE is JSON when it parses, else a string')
    .argument('<scope>', 'global | worker | job')
    .argument('[args...]', '[NAME] KEY=VALUE...')
    .option('--replace', 'replace the whole map instead of merging (worker maps and global)')
    .option('--unset <key...>', 'delete keys')
    .addHelpText(
      'after',
      '\nExamples:\n  sluice context set global interval=5m batch=500\n  sluice context set worker w1 interval=30m --unset old_key\n  sluice context set job ingest \'filters=["a","b"]\'',
    )
    .action(
      wrap(async (ctx, scope, args, opts) => {
        const list = [...(args as string[])];
        const name = scope === 'global' ? undefined : list.shift();
        const t = target(scope as string, name);
        const o = opts as { replace?: boolean; unset?: string[] };
        const body: Record<string, unknown> = Object.fromEntries(list.map(parseAssignment));
        if (o.unset) {
          if (o.replace)
            throw CliError.usage(
              '--unset and --replace do not combine: --replace already drops every key not given',
            );
          for (const key of o.unset) body[key] = null;
        }
        if (Object.keys(body).length === 0 && !o.replace)
          throw CliError.usage('nothing to set: give KEY=VALUE or --unset KEY');
        const api = await ctx.api();
        let answer: unknown;
        if (o.replace && t.kind === 'worker') {
          answer = await api.post(`/api/contexts/update-worker-nomerge/${encodeURIComponent(t.id)}`, {
            body,
          });
        } else if (o.replace && t.kind === 'global') {
          answer = await api.post('/api/contexts/import', {
            body: { format: CONTEXT_FILE_FORMAT, global: body },
          });
        } else if (o.replace) {
          throw CliError.usage('--replace works for global and worker maps; job maps merge only');
        } else if (t.kind === 'global') {
          answer = await api.post('/api/contexts/update-global', { body });
        } else {
          const path = t.kind === 'worker' ? 'update-worker-map' : 'update-job-map';
          answer = await api.post(`/api/contexts/${path}/${encodeURIComponent(t.id)}`, { body });
        }
        printResult(ctx.io, (answer as { context: unknown }).context, ctx.globals.output);
      }),
    );

  context
    .command('export')
    .description('Export the global context as JSON (to FILE, or standard output)')
    .argument('[file]')
    .action(
      wrap(async (ctx, file) => {
        const document = await (await ctx.api()).get('/api/contexts/export');
        const text = JSON.stringify(document, null, 2) + '\n';
        if (file) {
          await writeFile(file as string, text, { mode: 0o600 });
          ctx.io.stderr(`exported the global context to ${file}\n`);
        } else ctx.io.stdout(text);
      }),
    );

  context
    .command('import')
    .description('Replace the global context with an export file')
    .argument('<file>')
    .action(
      wrap(async (ctx, file) => {
        let document: unknown;
        try {
          document = JSON.parse(await readFile(file as string, 'utf8'));
        } catch (err) {
          throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
        }
        const answer = await (await ctx.api()).post('/api/contexts/import', { body: document });
        printResult(ctx.io, (answer as { context: unknown }).context, ctx.globals.output);
      }),
    );

  context
    .command('resolve')
    .description('Show the context a job gets on a worker, and where each value came from')
    .requiredOption('--job <job>')
    .requiredOption('--worker <worker>')
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as { job: string; worker: string };
        const resolved = await (await ctx.api()).get<{
          context: Record<string, unknown>;
          sources: Record<string, string>;
        }>('/api/contexts/resolve', { query: { job: o.job, worker: o.worker } });
        if (ctx.globals.output !== 'table') return printResult(ctx.io, resolved, ctx.globals.output);
        const rows = Object.entries(resolved.context).map(([key, value]) => ({
          key,
          value,
          source: resolved.sources[key],
        }));
        printResult(ctx.io, rows, 'table', { columns: ['key', 'value', 'source'] });
      }),
    );
};
