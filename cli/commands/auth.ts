/**
 * `sluice token user|api`, `sluice login`, `sluice logout`, `sluice whoami`. Passwords and
 * keys are read from standard input, or a password typed at the terminal without echo
 * (`login`); never from arguments (they would show in `ps`).
 */

import { Option } from 'commander';
import type { TokenResponse as TokenAnswer } from '../../shared/api/identity.ts';
import { removeLogin, writeLogin } from '../credentials-store.ts';
import { CliError } from '../exit-codes.ts';
import type { CommandContext } from '../globals.ts';
import { printResult, relativeTime } from '../output.ts';
import { askPassword, canPrompt, readSecretFromStdin } from '../stdin-secret.ts';
import type { CommandGroup } from './index.ts';

async function userToken(
  ctx: CommandContext,
  username: string,
  opts: { ttl?: string; tenant?: string },
  password: string,
): Promise<TokenAnswer> {
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
        const password = await readSecretFromStdin(ctx.io, 'password');
        const answer = await userToken(
          ctx,
          username as string,
          opts as { ttl?: string; tenant?: string },
          password,
        );
        ctx.io.stdout(`${answer.token}\n`);
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
    .description(
      'Sign in and keep the token for later commands (file mode 0600); on a terminal, the password is asked for without echo',
    )
    .argument('<username>')
    .option(
      '--password-stdin',
      'read the password from standard input (needed when it is not a terminal; on a terminal it is asked for)',
    )
    .option('--ttl <duration>', 'token lifetime, 1m to 24h', '8h')
    .option('--tenant <tenant>', 'tenant to act in')
    .addHelpText(
      'after',
      '\nOn a terminal, `sluice login USER` asks "Password:" and reads it without echo (with or without\n' +
        '--password-stdin). From a pipe or a file, give --password-stdin. Never give the password as an argument.\n' +
        '\nExamples:\n  sluice login admin\n  sluice login admin --password-stdin < .sluice/admin-password',
    )
    .action(
      wrap(async (ctx, username, opts) => {
        const o = opts as { ttl?: string; tenant?: string; passwordStdin?: boolean };
        const answer = await userToken(
          ctx,
          username as string,
          o,
          await loginPassword(ctx, username as string, o),
        );
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
    .command('logout')
    .description(
      'Forget the stored login for the server (--server / SLUICE_SERVER); the token itself stays valid until it expires',
    )
    .addHelpText(
      'after',
      '\nThe API cannot revoke a single token, so logout only deletes it from this machine and says until\n' +
        'when it would still work. To end every token of a user now, change the password (`sluice user passwd USER`).\n' +
        'With no stored login for the server, it says so and exits 0.\n' +
        '\nExample:\n  sluice logout --server https://sluice.example.com',
    )
    .action(
      wrap(async (ctx) => {
        const server = ctx.globals.server;
        const removed = await removeLogin(server, ctx.env);
        if (!removed) ctx.io.stderr(`no stored login for ${server}: nothing to forget\n`);
        else {
          const { login, expired, file } = removed;
          const who = `${login.username} in tenant ${login.tenant}`;
          if (expired)
            ctx.io.stderr(
              `logged out of ${server}: forgot the login of ${who}, which had expired at ${login.expires_at} (removed from ${file})\n`,
            );
          else
            ctx.io.stderr(
              `logged out of ${server}: forgot the login of ${who} (removed from ${file})\n` +
                `note: the token itself stays valid until ${login.expires_at} (${relativeTime(login.expires_at)}): ` +
                `the server cannot revoke a single token; to end every token of ${login.username} now, ` +
                `change the password (\`sluice user passwd ${login.username}\`)\n`,
            );
        }
        if (ctx.env.SLUICE_TOKEN)
          ctx.io.stderr(
            'warning: SLUICE_TOKEN is set: later commands still send its token; `unset SLUICE_TOKEN` to stop that\n',
          );
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

/**
 * The password for `login`: asked for on a terminal (with or without --password-stdin: a
 * terminal's input would echo), else read from standard input, which needs --password-stdin.
 */
async function loginPassword(
  ctx: CommandContext,
  username: string,
  opts: { passwordStdin?: boolean },
): Promise<string> {
  if (canPrompt(ctx.io)) return await askPassword(ctx.io, 'Password: ');
  if (!opts.passwordStdin)
    throw CliError.usage(
      'standard input is not a terminal, so the password cannot be asked for: pipe it with --password-stdin, ' +
        `e.g. \`sluice login ${username} --password-stdin < password.txt\` (nothing was sent)`,
    );
  return await readSecretFromStdin(ctx.io, 'password');
}
