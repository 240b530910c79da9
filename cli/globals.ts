/**
 * Global flags shared by every command, resolved once per run:
 * `--server` (env SLUICE_SERVER), the token (`--token-stdin`, env SLUICE_TOKEN, else the stored
 * login; `--token` works but shows the token to every local user in the process list),
 * `--ca-file` (env SLUICE_CA_FILE), `--insecure`, `--insecure-http`, `-o table|json|yaml`.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { ApiClient, type LoginInfo, type TokenSource } from './api-client.ts';
import { readStoredLogin } from './credentials-store.ts';
import { CliError } from './exit-codes.ts';
import { type CliIo, OUTPUT_FORMATS, type OutputFormat } from './output.ts';
import { readSecretFromStdin } from './stdin-secret.ts';
import { checkServerTransport } from './transport.ts';

export const DEFAULT_SERVER = 'https://127.0.0.1:8443';

export interface GlobalOptions {
  server: string;
  token?: string;
  tokenStdin?: boolean;
  caFile?: string;
  insecure?: boolean;
  insecureHttp?: boolean;
  output: OutputFormat;
}

export function addGlobalOptions(program: Command): Command {
  return program
    .option('--server <url>', `control plane URL (env: SLUICE_SERVER, default: ${DEFAULT_SERVER})`)
    .option(
      '--token <jwt>',
      'bearer token; other local users can read it in the process list: prefer SLUICE_TOKEN or --token-stdin',
    )
    .option(
      '--token-stdin',
      'read the bearer token from standard input (else env SLUICE_TOKEN, else the stored login)',
    )
    .option(
      '--ca-file <path>',
      'trust this CA certificate (PEM), e.g. .sluice/tls/cert.pem (env: SLUICE_CA_FILE)',
    )
    .option('--insecure', 'skip TLS certificate verification (local testing only)')
    .option(
      '--insecure-http',
      'allow an http:// server other than this machine (credentials travel unencrypted; env: SLUICE_INSECURE_HTTP=1)',
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS).default('table'));
}

/** What a command's action receives: its io, the global options, and an API client on demand. */
export interface CommandContext {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  globals: GlobalOptions;
  api(): Promise<ApiClient>;
}

export function commandContext(io: CliIo, command: Command, env: NodeJS.ProcessEnv): CommandContext {
  const given = command.optsWithGlobals<Partial<GlobalOptions>>();
  const token = given.token ?? env.SLUICE_TOKEN;
  const globals: GlobalOptions = {
    ...given,
    server: given.server ?? env.SLUICE_SERVER ?? DEFAULT_SERVER,
    output: given.output ?? 'table',
    ...(token ? { token } : {}),
    ...((given.caFile ?? env.SLUICE_CA_FILE) ? { caFile: given.caFile ?? env.SLUICE_CA_FILE } : {}),
    ...(given.insecureHttp || env.SLUICE_INSECURE_HTTP === '1' ? { insecureHttp: true } : {}),
  };
  let client: ApiClient | undefined;
  return {
    io: given.tokenStdin ? oneStdinReader(io, command) : io,
    env,
    globals,
    async api() {
      if (!client) {
        const warning = checkServerTransport(globals.server, globals.insecureHttp);
        if (warning) io.stderr(warning);
        const { token, source, login } = await tokenFor(io, globals, given.token !== undefined, env);
        client = new ApiClient({
          server: globals.server,
          token,
          tokenSource: source,
          login,
          caFile: globals.caFile,
          caFileFrom: given.caFile ? '--ca-file' : 'SLUICE_CA_FILE',
          insecure: globals.insecure,
          insecureHttp: globals.insecureHttp,
        });
      }
      return client;
    },
  };
}

/**
 * With `--token-stdin`, standard input holds the token, and nothing else can be read from
 * it: `--value-stdin`, `--password-stdin` and the like are refused before anything is read
 * or sent, and a command that always reads standard input (`worker enroll`) is refused when
 * it tries. `io` as the command sees it.
 */
function oneStdinReader(io: CliIo, command: Command): CliIo {
  const conflict = (other: string) =>
    CliError.usage(
      `--token-stdin and ${other} both read standard input, which can hold only one of them: ` +
        'give the token in SLUICE_TOKEN or by `sluice login` instead (nothing was sent)',
    );
  const flag = command.options.find(
    (option) => option.long?.endsWith('-stdin') && command.getOptionValue(option.attributeName()),
  );
  if (flag?.long) throw conflict(flag.long);
  return {
    ...io,
    readStdin: () => Promise.reject(conflict(`\`${commandPath(command)}\``)),
  };
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * The token and where it came from (named in the hint when the server refuses it); with
 * neither a flag nor SLUICE_TOKEN, the stored login, whose user, server and expiry the
 * messages name, also when it expired (then there is no token).
 */
async function tokenFor(
  io: CliIo,
  globals: GlobalOptions,
  onCommandLine: boolean,
  env: NodeJS.ProcessEnv,
): Promise<{ token: string | undefined; source: TokenSource | undefined; login?: LoginInfo }> {
  if (globals.tokenStdin) {
    if (onCommandLine) throw CliError.usage('pass either --token or --token-stdin, not both');
    return { token: await readSecretFromStdin(io, 'token'), source: 'stdin' };
  }
  if (onCommandLine)
    io.stderr(
      'warning: --token shows the token to every user of this machine in the process list; use SLUICE_TOKEN or --token-stdin\n',
    );
  if (globals.token) return { token: globals.token, source: onCommandLine ? 'flag' : 'env' };
  const stored = await readStoredLogin(globals.server, env);
  if (!stored) return { token: undefined, source: undefined };
  const { token, ...login } = stored.login;
  const info = { ...login, expired: stored.expired };
  return stored.expired
    ? { token: undefined, source: undefined, login: info }
    : { token, source: 'login', login: info };
}

/** A command's action: it receives the resolved globals and io, then the command's arguments. */
export type Action = (ctx: CommandContext, ...args: unknown[]) => Promise<void>;
/** Wraps an action so that it receives the resolved globals and io. */
export type Wrap = (action: Action) => (...args: unknown[]) => Promise<void>;
