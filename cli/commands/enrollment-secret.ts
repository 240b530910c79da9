/**
 * `sluice enrollment-secret create|ls|rm` (admin): secrets with which workers register
 * themselves (`sluice worker enroll`). A secret is printed once, when it is created.
 */
import { CliError } from '../exit-codes.ts';
import { addListCommand } from '../list-pages.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

function maxUses(given: string | undefined): number | undefined {
  if (given === undefined) return undefined;
  const uses = Number(given);
  if (!/^\d+$/.test(given) || !Number.isSafeInteger(uses) || uses < 1)
    throw CliError.usage(`--max-uses takes a whole number of 1 or more, not "${given}"`);
  return uses;
}

export const enrollmentSecretCommands: CommandGroup = (program, wrap) => {
  const secret = program
    .command('enrollment-secret')
    .description('Secrets with which workers enroll themselves (admin)');
  secret
    .command('create')
    .argument('<name>')
    .option('--expires-in <duration>', 'e.g. 24h (1s to 3650d; default: until deleted)')
    .option('--max-uses <n>', 'how many workers may enroll with it (default: no limit)')
    .description('Create an enrollment secret; it is printed once')
    .action(
      wrap(async (ctx, name, opts) => {
        const o = opts as { expiresIn?: string; maxUses?: string };
        const uses = maxUses(o.maxUses);
        const created = await (await ctx.api()).post('/api/enrollment-secrets', {
          body: {
            name,
            ...(o.expiresIn ? { expires_in: o.expiresIn } : {}),
            ...(uses === undefined ? {} : { max_uses: uses }),
          },
        });
        printResult(ctx.io, created, ctx.globals.output);
        ctx.io.stderr(
          'store the secret now: it is not shown again (on the worker: echo "$SECRET" | sluice worker enroll --id ID)\n',
        );
      }),
    );
  addListCommand(secret, wrap, {
    path: '/api/enrollment-secrets',
    columns: ['id', 'name', 'uses', 'max_uses', 'created_at', 'expires_at'],
    description: 'List enrollment secrets (never the secrets themselves)',
  });
  secret
    .command('rm')
    .argument('<id>')
    .description('Delete an enrollment secret; workers enrolled with it keep working')
    .action(
      wrap(async (ctx, id) => {
        await (await ctx.api()).delete(`/api/enrollment-secrets/${encodeURIComponent(id as string)}`);
        ctx.io.stderr(`deleted enrollment secret ${id}\n`);
      }),
    );
};
