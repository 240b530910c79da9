/**
 * Which control plane URLs the CLI will send credentials to. Tokens, API keys, worker keys
 * and passwords travel in headers and bodies, so plain `http://` would show them to anyone on
 * the network path. It is allowed without a word only to this machine's loopback addresses
 * (the local stack with SLUICE_HTTP=1), where nothing crosses a network; to any other host only
 * with `--insecure-http`, and then with a warning. Also the CA certificate file (`readCaFile`).
 */
import { readFileSync } from 'node:fs';
import { CliError, EXIT } from './exit-codes.ts';

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Refuses a URL the CLI must not send credentials to; returns a warning to print, if any. */
export function checkServerTransport(server: string, insecureHttp = false): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw CliError.usage(`--server must be a URL such as https://sluice.example.com, not "${server}"`);
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:')
    throw CliError.usage(`--server must be an https:// URL, not ${url.protocol}//`);
  if (isLoopbackHost(url.hostname)) return undefined;
  if (insecureHttp)
    return `warning: sending credentials unencrypted to ${url.origin} (--insecure-http); anyone on the network path can read them\n`;
  throw CliError.usage(
    `refusing to send credentials unencrypted to ${url.origin}: use https://, ` +
      'or pass --insecure-http (env SLUICE_INSECURE_HTTP=1) if this network is trusted',
  );
}

/**
 * The CA certificate the CLI trusts, read from `path`; `from` says where the path came from
 * (`--ca-file`, `SLUICE_CA_FILE`). A file that is missing or unreadable is an error naming
 * both, with where the local stack keeps its certificate, rather than a bare ENOENT.
 */
export function readCaFile(path: string, from = '--ca-file or SLUICE_CA_FILE'): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : (err as Error).message;
    const example =
      from === '--ca-file'
        ? '--ca-file "$PWD/.sluice/tls/cert.pem"'
        : 'export SLUICE_CA_FILE="$PWD/.sluice/tls/cert.pem"';
    throw new CliError(`cannot read the CA certificate ${path} (from ${from}): ${why}`, EXIT.error, [
      'For the local stack it is .sluice/tls/cert.pem in the checkout that runs `npm start` ' +
        '(written on its first start; a relative path is taken from the current directory): ' +
        `${example} there. For another server, ask its operator for its CA certificate (PEM).`,
    ]);
  }
}
