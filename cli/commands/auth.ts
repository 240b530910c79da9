/**
 * `sluice token user|api`, `sluice login`, `sluice whoami`. Passwords and keys are
 * read from standard input only, never from arguments (they would show in `ps`).
 */

import { Option } from 'commander';
import type { TokenResponse as TokenAnswer } from '../../shared/api/identity.ts';
import { writeLogin } from '../credentials-store.ts';
import type { CommandContext } from '../globals.ts';
import { printResult } from '../output.ts';
import { readSecretFromStdin } from '../stdin-secret.ts';
import type { CommandGroup } from './index.ts';

async function userToken(
  ctx: CommandContext,
  username: string,
  opts: { ttl?: string; tenant?: string },
): Promise<TokenAnswer> {
  const password = await readSecretFromStdin(ctx.io, 'password');
  const api = await ctx.api();
  return await api.post<TokenAnswer>('/api/tokens/create/user', {
    anonymous: true,
    body: {
      username,
      password,
      ...(opts.ttl ? { ttl: opts.ttl } : {}),
      ...(opts.tenant ? { tenant: opts.tenant } : {}),
    },
  });
}

const passwordStdin = () =>
  new Option('--password-stdin', 'read the password from standard input').makeOptionMandatory();

export const authCommands: CommandGroup = (program, wrap) => {
  const token = program.command('token').description('Issue tokens (printed alone, for scripts)');
  token
    .command('user')
    .description('Issue a user token; the password comes from standard input')
    .argument('<username>')
    .addOption(passwordStdin())
    .option('--ttl <duration>', 'token lifetime, 1m to 24h', '30m')
    .option('--tenant <tenant>', 'tenant to act in')
    .addHelpText(
      'after',
      '\nExample:\n  sluice token user admin --password-stdin --ttl 30m < .sluice/admin-password',
    )
    .action(
      wrap(async (ctx, username, opts) => {
        ctx.io.stdout(
          `${(await userToken(ctx, username as string, opts as { ttl?: string; tenant?: string })).token}\n`,
        );
      }),
    );
  token
    .command('api')
    .description('Exchange an API key (or worker key) read from standard input for a token')
    .option('--ttl <duration>', 'token lifetime, 1m to 24h', '30m')
    .addHelpText('after', '\nExample:\n  echo "$SLUICE_API_KEY" | sluice token api --ttl 1h')
    .action(
      wrap(async (ctx, opts) => {
        const key = await readSecretFromStdin(ctx.io, 'key');
        const api = await ctx.api();
        const answer = await api.post<TokenAnswer>('/api/tokens/create/api', {
          anonymous: true,
          body: { key, ttl: (opts as { ttl: string }).ttl },
        });
        ctx.io.stdout(`${answer.token}\n`);
      }),
    );

  program
    .command('login')
    .description('Sign in and keep the token for later commands (file mode 0600)')
    .argument('<username>')
    .addOption(passwordStdin())
    .option('--ttl <duration>', 'token lifetime, 1m to 24h', '8h')
    .option('--tenant <tenant>', 'tenant to act in')
    .action(
      wrap(async (ctx, username, opts) => {
        const answer = await userToken(ctx, username as string, opts as { ttl?: string; tenant?: string });
        const file = await writeLogin(
          ctx.globals.server,
          {
            token: answer.token,
            expires_at: answer.expires_at,
            username: username as string,
            tenant: answer.tenant,
          },
          ctx.env,
        );
        ctx.io.stderr(
          `logged in to ${ctx.globals.server} as ${username} (tenant ${answer.tenant}) until ${answer.expires_at}; token in ${file}\n`,
        );
        if (ctx.env.SLUICE_TOKEN) {
          ctx.io.stderr(
            'warning: SLUICE_TOKEN is set and takes precedence over this login: later commands still use it; `unset SLUICE_TOKEN` to use the login\n',
          );
        }
      }),
    );

  program
    .command('whoami')
    .description('Show the identity behind the current token')
    .action(
      wrap(async (ctx) => {
        const me = await (await ctx.api()).get('/api/auth/me');
        printResult(ctx.io, me, ctx.globals.output);
      }),
    );
};
