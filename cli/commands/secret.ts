/** `sluice secret set SCOPE/NAME --value-stdin`, `ls`, `rm` (admin). Values come from stdin only. */
import { Option } from 'commander';
import { CliError } from '../exit-codes.ts';
import { addListCommand } from '../list-pages.ts';
import { readSecretFromStdin } from '../stdin-secret.ts';
import type { CommandGroup } from './index.ts';

function split(ref: string): [string, string] {
  const [scope, name, ...rest] = ref.split('/');
  if (!scope || !name || rest.length) throw CliError.usage(`expected SCOPE/NAME, got "${ref}"`);
  return [encodeURIComponent(scope), encodeURIComponent(name)];
}

export const secretCommands: CommandGroup = (program, wrap) => {
  const secret = program
    .command('secret')
    .description('Secrets referenced by jobs as ${secret|scope/name} (admin)');
  secret
    .command('set')
    .argument('<scope/name>')
    .addOption(new Option('--value-stdin', 'read the value from standard input').makeOptionMandatory())
    .description('Store a secret; the value is read from standard input and never shown again')
    .action(
      wrap(async (ctx, ref) => {
        const value = await readSecretFromStdin(ctx.io, 'secret value');
        const [scope, name] = split(ref as string);
        await (await ctx.api()).put(`/api/secrets/${scope}/${name}`, { body: { value } });
        ctx.io.stderr(`stored secret ${ref}\n`);
      }),
    );
  addListCommand(secret, wrap, {
    path: '/api/secrets',
    columns: ['scope', 'name', 'updated_at'],
    description: 'List secrets (names and times, never values)',
  });
  secret
    .command('rm')
    .argument('<scope/name>')
    .description('Delete a secret; jobs that reference it fail until it is set again')
    .action(
      wrap(async (ctx, ref) => {
        const [scope, name] = split(ref as string);
        await (await ctx.api()).delete(`/api/secrets/${scope}/${name}`);
        ctx.io.stderr(`deleted secret ${ref}\n`);
      }),
    );
};
