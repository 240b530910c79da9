/**
 * How an input or output that makes HTTP requests says one failed. fetch rejects with
 * `fetch failed` and keeps the reason in `cause` (a refused connection, an unknown host,
 * an untrusted certificate); this adds it, and keeps a URL's user name and password out
 * of the message, since run reports become log lines, event payloads and deployment
 * states. (Secret values the job resolved at run time are replaced by the worker's
 * redactor, ./redact.ts, wherever the message goes.)
 *
 * @example
 *   requestFailed('https://u:p@127.0.0.1:8443/x', err);
 *   // 'request to https://***@127.0.0.1:8443/x failed: fetch failed (SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain)'
 */

/** The longest description of an error kept (a cause can quote much). */
const MAX_DESCRIPTION = 300;

/** `request to <url> failed: <error and its cause>`, without the URL's credentials. */
export function requestFailed(url: string, err: unknown): string {
  return `request to ${withoutUrlCredentials(url)} failed: ${describeFetchError(err)}`;
}

/**
 * An error with its cause: `fetch failed (ECONNRESET: other side closed)`. The code is left
 * out when the cause's message already holds it (`getaddrinfo ENOTFOUND example.test`); a
 * cause that gathers several (a connection tried on each address) gives its first.
 */
export function describeFetchError(err: unknown): string {
  const e = err as { message?: unknown; cause?: unknown } | undefined;
  const message = String(e?.message ?? err);
  const cause = e?.cause === undefined || e?.cause === null ? '' : describeCause(e.cause);
  return withoutUrlCredentials(cause ? `${message} (${cause})` : message).slice(0, MAX_DESCRIPTION);
}

function describeCause(cause: unknown): string {
  if (typeof cause !== 'object') return String(cause);
  const c = cause as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof c.code === 'string' ? c.code : '';
  let message = typeof c.message === 'string' ? c.message : '';
  if (!message && Array.isArray(c.errors) && c.errors.length) {
    const first = c.errors[0] as { message?: unknown } | undefined;
    message = typeof first?.message === 'string' ? first.message : '';
  }
  if (!code) return message;
  if (!message || message.includes(code)) return message || code;
  return `${code}: ${message}`;
}

/**
 * Replaces the user name and password of every URL in `text` with `***`:
 * `https://u:p@host/` becomes `https://***@host/`. (fetch refuses such a URL and quotes it
 * whole in its error.)
 */
export function withoutUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi, '$1***@');
}
