/**
 * Which control plane URLs the CLI will send credentials to. Tokens, API keys, worker keys
 * and passwords travel in headers and bodies, so plain `http://` would show them to anyone on
 * the network path. It is allowed without a word only to this machine's loopback addresses
 * (the local stack with SLUICE_HTTP=1), where nothing crosses a network; to any other host only
 * with `--insecure-http`, and then with a warning.
 */
import { CliError } from './exit-codes.ts';

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
