/** `sluice user ...`, `sluice api-key ...`, `sluice worker create|ls|get|rm|rotate-key|enroll`. */
import { CliError } from '../exit-codes.ts';
import { addListCommand } from '../list-pages.ts';
import { type CliIo, printResult } from '../output.ts';
import {
  askPassword,
  canPrompt,
  confirmPassword,
  oneLine,
  readNewPassword,
  readSecretFromStdin,
} from '../stdin-secret.ts';
import { collect } from './context.ts';
import type { CommandGroup } from './index.ts';

function labels(pairs: string[] = []): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw CliError.usage(`labels are KEY=VALUE, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** `--label KEY=VALUE`, one pair each, repeated for more (a variadic option would swallow the id after it). */
const LABEL_FLAGS = '--label <key=value>';
const LABEL_HELP = 'a label, e.g. zone=eu; repeat for more';

/**
 * Your own password change: on a terminal, the current password then the new one twice,
 * asked for without echo; else two lines on standard input, the current password then the new one.
 */
async function ownPasswordChange(io: CliIo): Promise<{ password: string; current_password: string }> {
  if (canPrompt(io)) {
    const current_password = await askPassword(io, 'Current password: ');
    const password = await askPassword(io, 'New password: ');
    await confirmPassword(io, password);
    return { current_password, password };
  }
  const lines = (await readSecretFromStdin(io, 'current and new password')).split(/\r?\n/);
  if (lines.length !== 2 || !lines[0] || !lines[1]) {
    throw CliError.usage(
      'changing your own password needs two lines on standard input: the current password, then the new one',
    );
  }
  return {
    current_password: oneLine(lines[0], 'the current password'),
    password: oneLine(lines[1], 'the new password'),
  };
}

export const identityCommands: CommandGroup = (program, wrap) => {
  const user = program.command('user').description('Users of the tenant (admin)');
  user
    .command('create')
    .argument('<username>')
    .description(
      'Create a user in the tenant with the password read from standard input (on a terminal, asked for ' +
        'without echo, twice), or add an existing user (the tenant must exist: `sluice tenant create`)',
    )
    .requiredOption('--role <role>', 'admin, operator or viewer')
    .option('--tenant <tenant>', 'tenant (system admin only, default: yours)')
    .option(
      '--password-stdin',
      'read the new user’s password from standard input; on a terminal it is asked for (omit to add an existing user)',
    )
    .action(
      wrap(async (ctx, username, opts) => {
        const o = opts as { role: string; tenant?: string; passwordStdin?: boolean };
        const password = o.passwordStdin
          ? await readNewPassword(
              ctx.io,
              username as string,
              'Only `sluice user passwd` of your own password reads two lines (the current password, then the new one).',
              'the password',
            )
          : undefined;
        const created = await (await ctx.api()).post('/api/users', {
          body: {
            username,
            role: o.role,
            ...(o.tenant ? { tenant: o.tenant } : {}),
            ...(password ? { password } : {}),
          },
        });
        printResult(ctx.io, created, ctx.globals.output);
      }),
    );
  addListCommand(user, wrap, {
    path: '/api/users',
    columns: ['username', 'role', 'tenant'],
    description: 'List users',
  });
  user
    .command('rm')
    .argument('<username>')
    .description('Remove a user from the tenant; their tokens stop working')
    .action(
      wrap(async (ctx, username) => {
        await (await ctx.api()).delete(`/api/users/${encodeURIComponent(username as string)}`);
        ctx.io.stderr(`removed user ${username}\n`);
      }),
    );
  user
    .command('passwd')
    .argument('<username>')
    .description(
      'Change a password read from standard input; for your own, two lines: the current password, ' +
        'then the new one. On a terminal, they are asked for without echo (the new one twice). Old tokens stop working',
    )
    .action(
      wrap(async (ctx, username) => {
        const api = await ctx.api();
        const me = (await api.get('/api/auth/me')) as { subject: string; kind: string };
        const self = me.kind === 'user' && me.subject === username;
        const body = self
          ? await ownPasswordChange(ctx.io)
          : {
              password: await readNewPassword(
                ctx.io,
                username as string,
                `Two lines (the current password, then the new one) are only for changing your own password; to reset ${username as string}'s, pipe the new password alone.`,
              ),
            };
        await api.post(`/api/users/${encodeURIComponent(username as string)}/password`, { body });
        ctx.io.stderr(`password changed for ${username}\n`);
      }),
    );

  const apiKey = program.command('api-key').description('API keys for automation (admin)');
  apiKey
    .command('create')
    .argument('<name>')
    .requiredOption('--role <role>', 'admin, operator or viewer')
    .option('--expires-in <duration>', 'e.g. 90d')
    .description('Create a key; it is printed once')
    .action(
      wrap(async (ctx, name, opts) => {
        const o = opts as { role: string; expiresIn?: string };
        const created = await (await ctx.api()).post('/api/api-keys', {
          body: { name, role: o.role, ...(o.expiresIn ? { expires_in: o.expiresIn } : {}) },
        });
        printResult(ctx.io, created, ctx.globals.output);
        ctx.io.stderr('store the key now: it is not shown again\n');
      }),
    );
  addListCommand(apiKey, wrap, {
    path: '/api/api-keys',
    columns: ['id', 'name', 'role', 'created_at', 'expires_at'],
    description: 'List API keys (never the keys themselves)',
  });
  apiKey
    .command('rm')
    .argument('<id>')
    .description('Delete an API key; its tokens stop working')
    .action(
      wrap(async (ctx, id) => {
        await (await ctx.api()).delete(`/api/api-keys/${encodeURIComponent(id as string)}`);
        ctx.io.stderr(`deleted API key ${id}\n`);
      }),
    );

  const worker = program.command('worker').description('Workers that run jobs');
  worker
    .command('create')
    .argument('<id>')
    .option(LABEL_FLAGS, LABEL_HELP, collect)
    .description('Register a worker; its key is printed once')
    .action(
      wrap(async (ctx, id, opts) => {
        const created = await (await ctx.api()).post('/api/workers', {
          body: { id, labels: labels((opts as { label?: string[] }).label) },
        });
        printResult(ctx.io, created, ctx.globals.output);
        ctx.io.stderr(STORE_WORKER_KEY);
      }),
    );
  addListCommand(worker, wrap, {
    path: '/api/workers',
    columns: ['id', 'state', 'last_seen', 'jobs', 'labels'],
    description: 'List workers',
  });
  worker
    .command('get')
    .argument('<id>')
    .description('Show a worker: state, last heartbeat, jobs and labels')
    .action(
      wrap(async (ctx, id) =>
        printResult(
          ctx.io,
          await (await ctx.api()).get(`/api/workers/${encodeURIComponent(id as string)}`),
          ctx.globals.output,
        ),
      ),
    );
  worker
    .command('rm')
    .argument('<id>')
    .description('Delete a worker: its key stops working and it is taken off every job')
    .action(
      wrap(async (ctx, id) => {
        await (await ctx.api()).delete(`/api/workers/${encodeURIComponent(id as string)}`);
        ctx.io.stderr(`deleted worker ${id}\n`);
      }),
    );
  worker
    .command('rotate-key')
    .argument('<id>')
    .description('Give the worker a new key; the old one stops working; the new one is printed once')
    .action(
      wrap(async (ctx, id) => {
        printResult(
          ctx.io,
          await (await ctx.api()).post(`/api/workers/${encodeURIComponent(id as string)}/rotate-key`),
          ctx.globals.output,
        );
        ctx.io.stderr(STORE_WORKER_KEY);
      }),
    );
  worker
    .command('enroll')
    .description(
      'Register this machine as a worker with an enrollment secret read from standard input; its key is printed once',
    )
    .option('--id <id>', 'worker id (default: generated)')
    .option(LABEL_FLAGS, LABEL_HELP, collect)
    .action(
      wrap(async (ctx, opts) => {
        const o = opts as { id?: string; label?: string[] };
        const secret = await readSecretFromStdin(ctx.io, 'enrollment secret');
        const enrolled = await (await ctx.api()).post('/api/workers/enroll', {
          anonymous: true,
          body: { secret, labels: labels(o.label), ...(o.id ? { id: o.id } : {}) },
        });
        printResult(ctx.io, enrolled, ctx.globals.output);
        ctx.io.stderr(STORE_WORKER_KEY);
      }),
    );
};

/** After a worker key was printed: `worker create`, `rotate-key` and `enroll`. */
const STORE_WORKER_KEY = 'store the key now: it is not shown again (run the worker with SLUICE_WORKER_KEY)\n';
