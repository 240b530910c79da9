/**
 * Global flags shared by every command, resolved once per run:
 * `--server` (env SLUICE_SERVER), `--token` (env SLUICE_TOKEN, else the stored login),
 * `--ca-file`, `--insecure`, `-o table|json|yaml`.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { ApiClient } from './api-client.ts';
import { readLogin } from './credentials-store.ts';
import { type CliIo, OUTPUT_FORMATS, type OutputFormat } from './output.ts';

export const DEFAULT_SERVER = 'https://127.0.0.1:8443';

export interface GlobalOptions {
  server: string;
  token?: string;
  caFile?: string;
  insecure?: boolean;
  output: OutputFormat;
}

export function addGlobalOptions(program: Command): Command {
  return program
    .option('--server <url>', `control plane URL (env: SLUICE_SERVER, default: ${DEFAULT_SERVER})`)
    .option('--token <jwt>', 'bearer token (env: SLUICE_TOKEN, default: the stored login)')
    .option('--ca-file <path>', 'trust this CA certificate (PEM), e.g. .sluice/tls/cert.pem')
    .option('--insecure', 'skip TLS certificate verification (local testing only)')
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
  const globals: GlobalOptions = {
    ...given,
    server: given.server ?? env.SLUICE_SERVER ?? DEFAULT_SERVER,
    output: given.output ?? 'table',
    ...((given.token ?? env.SLUICE_TOKEN) ? { token: given.token ?? env.SLUICE_TOKEN } : {}),
  };
  let client: ApiClient | undefined;
  return {
    io,
    env,
    globals,
    async api() {
      if (!client) {
        const token = globals.token ?? (await readLogin(globals.server, env))?.token;
        client = new ApiClient({
          server: globals.server,
          token,
          caFile: globals.caFile,
          insecure: globals.insecure,
        });
      }
      return client;
    },
  };
}
