/** `sluice tenant create NAME` (system admin) and `sluice tenant ls`. */
import { addListCommand } from '../list-pages.ts';
import { printResult } from '../output.ts';
import type { CommandGroup } from './index.ts';

export const tenantCommands: CommandGroup = (program, wrap) => {
  const tenant = program.command('tenant').description('Tenants: separate sets of users, workers and jobs');
  tenant
    .command('create')
    .argument('<name>', '2-63 lowercase letters, digits and -')
    .description('Create a tenant (system admin); then add its first admin with `sluice user create`')
    .action(
      wrap(async (ctx, name) => {
        const created = await (await ctx.api()).post('/api/tenants', { body: { name } });
        printResult(ctx.io, created, ctx.globals.output);
        ctx.io.stderr(
          `add its first admin: echo "$PASSWORD" | sluice user create USERNAME --role admin --tenant ${name} --password-stdin\n`,
        );
      }),
    );
  addListCommand(tenant, wrap, {
    path: '/api/tenants',
    columns: ['name', 'created_at'],
    description: 'List tenants (all of them for the system admin, else your own)',
  });
};
