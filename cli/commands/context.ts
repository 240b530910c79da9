/**
 * `sluice context get|set|export|import|resolve` (admin): the context maps of
 * CONTRACT section 2 from the command line.
 */

import { readFile, stat, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { CONTEXT_FILE_FORMAT } from '../../shared/context/context-file.ts';
import { MAX_MAP_BYTES } from '../../shared/context/map.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import type { CommandContext } from '../globals.ts';
import { type CliIo, formatResult, printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';
import { stageHint } from './stage-hint.ts';

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

/** Commander collector for a repeatable single-value option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * `KEY=VALUE`: VALUE is JSON when it parses, else a string (the contract's rule). Two cases
 * of that rule surprise people, so they are said on `warn` (stderr), with how to keep the
 * text: an integer a JSON number cannot hold exactly (a 20-digit id becomes another number),
 * and a value that starts like a JSON list or map but does not parse (kept as text).
 */
export function parseAssignment(text: string, warn: (message: string) => void = () => {}): [string, unknown] {
  const at = text.indexOf('=');
  if (at < 1) throw CliError.usage(`expected KEY=VALUE, got "${text}"`);
  const key = text.slice(0, at);
  const raw = text.slice(at + 1);
  const asText = `to keep it as text, write it as a JSON string: ${key}='${JSON.stringify(raw).replaceAll("'", "'\\''")}'`;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    if (/^\s*[[{]/.test(raw))
      warn(`note: ${key}: not valid JSON (${(err as Error).message}); stored as text\n`);
    return [key, raw];
  }
  if (typeof value === 'number' && /^-?\d+$/.test(raw.trim()) && !Number.isSafeInteger(value))
    warn(`note: ${key}: ${raw.trim()} is too large for a JSON number and is stored as ${value}; ${asText}\n`);
  return [key, value];
}

/**
 * `KEY=@FILE` becomes `KEY=<FILE's text>`, `KEY=@-` `KEY=<standard input>`, as kubectl and
 * curl read `@`: the text with one trailing newline dropped (as `--value-stdin` does), for
 * `parseAssignment` to apply the rule of a typed VALUE. `KEY=@@...` is the text `@...`.
 * Anything else is returned as it is. Nothing is read before every argument was checked:
 * standard input once, and piped.
 */
export async function readValueFiles(io: CliIo, args: string[]): Promise<string[]> {
  const sources = args.map((arg) => {
    const at = arg.indexOf('=');
    const key = arg.slice(0, at);
    const value = arg.slice(at + 1);
    // Without `KEY=`, parseAssignment says what is wrong, before anything is read.
    if (at < 1) parseAssignment(arg);
    if (!value.startsWith('@')) return { arg };
    if (value.startsWith('@@')) return { arg: `${key}=${value.slice(1)}` };
    const from = value.slice(1);
    if (!from)
      throw CliError.usage(
        `${key}=@ names no file: write ${key}=@FILE to read the value from a file, ${key}=@- from standard input, or ${key}=@@ for the text "@"`,
      );
    return { key, from };
  });
  const fromStdin = sources.filter((s) => s.from === '-').map((s) => s.key);
  if (fromStdin.length > 1)
    throw CliError.usage(
      `only one value can come from standard input, not ${fromStdin.join(' and ')}: read the others from files (KEY=@FILE)`,
    );
  if (fromStdin.length === 1 && io.stdinIsTty)
    throw CliError.usage(
      `${fromStdin[0]}=@- reads the value from standard input: pipe it, e.g. \`cat value.txt | sluice context set ...\``,
    );
  return await Promise.all(
    sources.map(async (s) => {
      if (s.arg !== undefined) return s.arg;
      const text = s.from === '-' ? await io.readStdin() : await readValueFile(s.key, s.from);
      return `${s.key}=${text.replace(/\r?\n$/, '')}`;
    }),
  );
}

/** The text of FILE in `KEY=@FILE`: UTF-8, at most what a context map may hold. */
async function readValueFile(key: string, file: string): Promise<string> {
  const atHint = `a value that starts with @ is read from a file; for text that starts with @, write ${key}=@@...`;
  let bytes: Buffer;
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw Object.assign(new Error(), { code: 'EISDIR' });
    if (info.size > MAX_MAP_BYTES)
      throw new CliError(
        `${file} (the value of ${key}) is ${info.size} bytes; a context map may be at most 256 KiB (nothing was sent)`,
      );
    bytes = await readFile(file);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (code ?? (err as Error).message);
    throw new CliError(`cannot read ${file} (the value of ${key}): ${why} (nothing was sent)`, EXIT.error, [
      atHint,
    ]);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(
      `${file} (the value of ${key}) is not UTF-8 text: a context value is text or JSON (nothing was sent)`,
    );
  }
}

/**
 * An export file as `context import` sends it: JSON, or YAML (`context export -o yaml`). JSON
 * is read as JSON first, so its numbers and strings are exactly JSON's.
 */
function exportDocument(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // YAML, perhaps.
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new CliError(
      `${file} is not JSON or YAML (${(err as Error).message.split('\n', 1)[0]}): give a file \`sluice context export\` wrote (nothing was sent)`,
    );
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
    .description(
      'Set keys (merge); VALUE is JSON when it parses, else a string; KEY=@FILE reads it from a file',
    )
    .argument('<scope>', 'global | worker | job')
    .argument('[args...]', '[NAME] KEY=VALUE... (or KEY=@FILE, KEY=@-)')
    .option('--replace', 'replace the whole map with the KEY=VALUE pairs given (worker maps and global)')
    .option('--clear', 'remove every key of the map (worker maps and global)')
    .option('--unset <key>', 'delete a key (repeat for more)', collect)
    .addHelpText(
      'after',
      '\nVALUE is JSON (number, true, false, null, list, map, "string") when it parses, else a string;\n' +
        'a JSON string keeps text that would parse as something else (v=\'"1.10"\').\n' +
        'KEY=@FILE takes the value from FILE, KEY=@- from standard input: the text, one trailing newline\n' +
        'dropped, then the same rule (JSON when it parses, else a string). For text that starts with @,\n' +
        'double it: KEY=@@home is the text "@home".\n' +
        '\nExamples:\n  sluice context set global interval=5m batch=500\n  sluice context set worker w1 interval=30m --unset old_key --unset older_key\n  sluice context set job ingest \'filters=["a","b"]\'\n  sluice context set job ingest query=@query.sql filters=@filters.json\n  curl -s https://example.org/hosts.json | sluice context set global hosts=@-\n  sluice context set worker w1 --clear',
    )
    .action(
      wrap(async (ctx, scope, args, opts) => {
        const list = [...(args as string[])];
        // Worker ids and job names hold no `=`: `context set worker a=1` left the name out.
        if ((scope === 'worker' || scope === 'job') && (list[0] === undefined || list[0].includes('=')))
          throw CliError.usage(
            `missing the ${scope} name: sluice context set ${scope} NAME KEY=VALUE... (or --unset KEY)`,
          );
        const name = scope === 'global' ? undefined : list.shift();
        const t = target(scope as string, name);
        const o = opts as { replace?: boolean; clear?: boolean; unset?: string[] };
        const unset = o.unset ?? [];
        const bare = list.find((arg) => !arg.includes('='));
        if (bare !== undefined && unset.length > 0)
          throw CliError.usage(
            `expected KEY=VALUE, got "${bare}": --unset takes one key, repeat it for more (--unset ${bare})`,
          );
        if (o.clear) {
          if (list.length > 0 || unset.length > 0)
            throw CliError.usage('--clear removes every key: give no KEY=VALUE or --unset with it');
          if (t.kind === 'job')
            throw CliError.usage('--clear works for global and worker maps; for a job map, --unset each key');
        }
        if (unset.length > 0 && o.replace)
          throw CliError.usage(
            '--unset and --replace do not combine: --replace already drops every key not given',
          );
        if (o.replace && t.kind === 'job')
          throw CliError.usage('--replace works for global and worker maps; job maps merge only');
        // Files and standard input are read only once the arguments are known to be right.
        const body: Record<string, unknown> = Object.fromEntries(
          (await readValueFiles(ctx.io, list)).map((arg) => parseAssignment(arg, ctx.io.stderr)),
        );
        for (const key of unset) body[key] = null;
        const replace = o.replace || o.clear;
        if (Object.keys(body).length === 0 && !o.clear)
          throw CliError.usage(
            o.replace
              ? '--replace needs KEY=VALUE pairs (with none it would empty the map); to remove every key on purpose, use --clear'
              : 'nothing to set: give KEY=VALUE or --unset KEY',
          );
        const api = await ctx.api();
        let answer: unknown;
        if (replace && t.kind === 'worker') {
          answer = await api.post(`/api/contexts/update-worker-nomerge/${encodeURIComponent(t.id)}`, {
            body,
          });
        } else if (replace && t.kind === 'global') {
          answer = await api.post('/api/contexts/import', {
            body: { format: CONTEXT_FILE_FORMAT, global: body },
          });
        } else if (t.kind === 'global') {
          answer = await api.post('/api/contexts/update-global', { body });
        } else {
          const path = t.kind === 'worker' ? 'update-worker-map' : 'update-job-map';
          answer = await api.post(`/api/contexts/${path}/${encodeURIComponent(t.id)}`, { body });
        }
        printResult(ctx.io, (answer as { context: unknown }).context, ctx.globals.output);
        if (t.kind === 'job') {
          const hint = await stageHint(api, t.id, { jobContext: true });
          if (hint) ctx.io.stderr(hint);
        }
      }),
    );

  context
    .command('export')
    .description(
      'Export the global context: to FILE as JSON (what `context import` reads), or to standard output ' +
        'as JSON (default) or YAML (-o yaml)',
    )
    .argument('[file]')
    .action(
      wrap(async (ctx, file) => {
        const yaml = ctx.globals.output === 'yaml';
        if (file && yaml)
          throw CliError.usage(
            `export to a FILE writes JSON; for YAML, print it instead: sluice context export -o yaml > ${file} (\`sluice context import\` reads both)`,
          );
        const document = await (await ctx.api()).get('/api/contexts/export');
        // A table says nothing a backup needs: JSON unless YAML was asked for.
        const text = formatResult(document, yaml ? 'yaml' : 'json') + '\n';
        if (file) {
          await writeFile(file as string, text, { mode: 0o600 });
          ctx.io.stderr(`exported the global context to ${file}\n`);
        } else ctx.io.stdout(text);
      }),
    );

  context
    .command('import')
    .description('Replace the global context with an export file (JSON or YAML, as `context export` writes)')
    .argument('<file>')
    .action(
      wrap(async (ctx, file) => {
        let text: string;
        try {
          text = await readFile(file as string, 'utf8');
        } catch (err) {
          throw new CliError(
            `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          );
        }
        const document = exportDocument(file as string, text);
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
