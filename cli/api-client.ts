/**
 * The CLI's HTTP client for the Sluice API: TLS options from the global flags,
 * the bearer token in a header (never in a URL), and the contract's error body
 * turned into a `CliError` with the right exit code and a hint of what to do next. The hint
 * for a 401 or 403 depends on what was refused: a password, key or secret sent without a
 * token, a token from SLUICE_TOKEN, --token or --token-stdin, the stored login, or the
 * current password of your own password change.
 *
 * @example
 *   const api = new ApiClient({ server, token, insecure: false });
 *   const me = await api.get('/api/auth/me');
 */

import type { Agent, Dispatcher } from 'undici';
import { MAX_PAGE_SIZE, NEXT_PAGE_HEADER } from '../shared/api/paging.ts';
import { retryAfterSeconds } from '../shared/api/retry-after.ts';
import type { ErrorBody } from '../shared/errors.ts';
import type { StoredLogin } from './credentials-store.ts';
import { CliError, EXIT, exitCodeForApiError } from './exit-codes.ts';
import { relativeTime } from './output.ts';
import { checkServerTransport, readCaFile } from './transport.ts';

/** Where the token came from, for the hint when the server refuses it. */
export type TokenSource = 'flag' | 'stdin' | 'env' | 'login';

/** The stored login the token came from (or that expired), as the messages name it. */
export type LoginInfo = Omit<StoredLogin, 'token'> & { expired: boolean };

export interface ApiClientOptions {
  server: string;
  token?: string | undefined;
  tokenSource?: TokenSource | undefined;
  /** The stored login for this server: the token's, or one that expired (then no token). */
  login?: LoginInfo | undefined;
  caFile?: string | undefined;
  /** Where `caFile` came from (`--ca-file`, `SLUICE_CA_FILE`), named when it cannot be read. */
  caFileFrom?: string | undefined;
  insecure?: boolean | undefined;
  /** Allow http:// to hosts other than this machine (see cli/transport.ts). */
  insecureHttp?: boolean | undefined;
}

export interface RequestOptions {
  body?: unknown;
  /** Send `body` as-is with this media type instead of JSON. */
  contentType?: string;
  accept?: string;
  /** Routes that take no token (token creation, enrollment). */
  anonymous?: boolean;
  query?: Record<string, string | undefined>;
  /** Ends the request early (a long poll on Ctrl-C). */
  signal?: AbortSignal;
}

/** undici's request function. */
type Request = typeof import('undici').request;

export class ApiClient {
  private readonly ca: Buffer | undefined;
  /**
   * undici and its connection pool, loaded with the first request: commands that never
   * call the API (`job run`, `job validate`, `--help`) start about 0.04 s sooner.
   */
  private http: Promise<{ agent: Agent; request: Request }> | undefined;

  constructor(private readonly options: ApiClientOptions) {
    // Here rather than only in the flag handling, so that no caller can send a key in clear by accident.
    checkServerTransport(options.server, options.insecureHttp);
    this.ca = options.caFile ? readCaFile(options.caFile, options.caFileFrom) : undefined;
  }

  private connection(): Promise<{ agent: Agent; request: Request }> {
    this.http ??= import('undici').then(({ Agent, request }) => ({
      agent: new Agent({
        connect: { rejectUnauthorized: !this.options.insecure, ...(this.ca ? { ca: this.ca } : {}) },
      }),
      request,
    }));
    return this.http;
  }

  get server(): string {
    return this.options.server.replace(/\/+$/, '');
  }

  get = <T = unknown>(path: string, opts?: RequestOptions) => this.call<T>('GET', path, opts);
  post = <T = unknown>(path: string, opts?: RequestOptions) => this.call<T>('POST', path, opts);
  put = <T = unknown>(path: string, opts?: RequestOptions) => this.call<T>('PUT', path, opts);
  delete = <T = unknown>(path: string, opts?: RequestOptions) => this.call<T>('DELETE', path, opts);

  async call<T>(method: Dispatcher.HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.send<T>(method, path, opts)).value;
  }

  /**
   * Every item of a paged list endpoint (`X-Next-Page-Token`, shared/api/paging.ts), a
   * page at a time; with `limit`, the first `limit` items only. `onPage` sees the count so
   * far, for progress on long lists.
   */
  async list<T>(
    path: string,
    opts: { limit?: number; pageSize?: number; onPage?: (items: number) => void } = {},
  ): Promise<T[]> {
    const items: T[] = [];
    const pageSize = opts.pageSize ?? MAX_PAGE_SIZE;
    let token: string | undefined;
    do {
      const want = opts.limit === undefined ? pageSize : Math.min(pageSize, opts.limit - items.length);
      const page = await this.send<T[]>('GET', path, {
        query: { limit: String(want), ...(token ? { page_token: token } : {}) },
      });
      items.push(...page.value);
      token = page.next;
      opts.onPage?.(items.length);
    } while (token && (opts.limit === undefined || items.length < opts.limit));
    return items;
  }

  private async send<T>(
    method: Dispatcher.HttpMethod,
    path: string,
    opts: RequestOptions,
  ): Promise<{ value: T; next?: string }> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (!opts.anonymous) {
      if (!this.options.token) throw notLoggedIn(this.server, this.options.login);
      checkToken(this.options.token, this.options.tokenSource, this.options.login);
      headers.authorization = `Bearer ${this.options.token.trim()}`;
    }
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      body = opts.contentType ? String(opts.body) : JSON.stringify(opts.body);
    }
    let res: Awaited<ReturnType<Request>>;
    try {
      const { agent, request } = await this.connection();
      res = await request(url, {
        method,
        headers,
        body,
        dispatcher: agent,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (err) {
      // A request undici refused to build (a header value it cannot send) never left this machine.
      if ((err as { code?: string }).code === 'UND_ERR_INVALID_ARG')
        throw new CliError(
          `the request could not be sent: ${(err as Error).message} (nothing was sent)`,
          EXIT.usage,
        );
      throw connectionError(this.server, err);
    }
    const text = await res.body.text();
    if (res.statusCode >= 400) {
      throw apiError(res.statusCode, text, {
        method,
        path,
        body: opts.body,
        tokenSource: opts.anonymous ? undefined : (this.options.tokenSource ?? 'other'),
        server: this.server,
        login: this.options.login,
        retryAfter: retryAfterSeconds([res.headers['retry-after']].flat()[0]),
      });
    }
    const nextHeader = res.headers[NEXT_PAGE_HEADER.toLowerCase()];
    const next = typeof nextHeader === 'string' && nextHeader ? nextHeader : undefined;
    if (res.statusCode === 204 || text === '') return { value: undefined as T, ...(next ? { next } : {}) };
    const type = String(res.headers['content-type'] ?? '');
    const value = (type.includes('json') ? JSON.parse(text) : text) as T;
    return { value, ...(next ? { next } : {}) };
  }

  async close(): Promise<void> {
    if (this.http) await (await this.http).agent.close();
  }
}

/** Where a token came from, as the messages about it name it. */
const TOKEN_FROM: Record<TokenSource, string> = {
  env: 'the token in SLUICE_TOKEN',
  flag: 'the token given with --token',
  stdin: 'the token read with --token-stdin',
  login: 'the token of the stored login',
};

/**
 * A token is a JWT or an `slk_`/`slw_` key: printable ASCII only. Anything else cannot go
 * in the Authorization header (a line break would end it), so it is refused before sending,
 * as a credential that is not valid (exit 3), naming where it came from and never its text.
 */
function checkToken(token: string, source: TokenSource | undefined, login: LoginInfo | undefined): void {
  // Spaces around it are what the header loses anyway.
  const bad = /[^\x21-\x7e]/.exec(token.trim())?.[0];
  if (bad === undefined) return;
  const what = /[\r\n]/.test(bad)
    ? 'a line break'
    : bad === ' '
      ? 'a space'
      : `the character U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const from = source ? TOKEN_FROM[source] : 'the token';
  throw new CliError(`${from} holds ${what}, so it is not a valid token (nothing was sent)`, EXIT.auth, [
    source === 'stdin'
      ? 'Pipe just the token, on one line (`sluice token user ...` prints one).'
      : source === 'login'
        ? `Run \`sluice login ${login?.username ?? 'USERNAME'}\` again.`
        : 'Give a token exactly as `sluice token user ...` printed it, on one line.',
  ]);
}

/** What a failed request was, for the hint of what to do next. */
interface Refused {
  method: string;
  path: string;
  body: unknown;
  /** Undefined for a request made without a token (token creation, enrollment). */
  tokenSource: TokenSource | 'other' | undefined;
  server: string;
  login: LoginInfo | undefined;
  retryAfter: number | undefined;
}

/**
 * No token to send: nobody logged in to `server`, or the stored login expired, which is
 * said with when, and with the user to log in as.
 */
function notLoggedIn(server: string, login: LoginInfo | undefined): CliError {
  if (!login)
    return new CliError(`not logged in to ${server}`, EXIT.auth, [
      'Run `sluice login USERNAME` (on a terminal it asks for the password; --password-stdin reads it from a pipe), ' +
        'or set SLUICE_TOKEN / --token-stdin.',
    ]);
  return new CliError(
    `the stored login for ${server} (${login.username}, tenant ${login.tenant}) expired at ${login.expires_at}${since(login.expires_at)}`,
    EXIT.auth,
    [
      `Run \`sluice login ${login.username}\` to log in again (on a terminal it asks for the password; ` +
        '--password-stdin reads it from a pipe), or set SLUICE_TOKEN / --token-stdin.',
    ],
  );
}

/** ` (2 h ago)`, or nothing for a time that does not parse. */
function since(iso: string): string {
  const relative = relativeTime(iso);
  return relative ? ` (${relative})` : '';
}

function apiError(status: number, text: string, refused: Refused): CliError {
  let body: ErrorBody | undefined;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not our error body (a proxy, perhaps).
  }
  if (!body?.error) return new CliError(`server answered ${status}: ${text.slice(0, 200)}`, EXIT.error);
  const { code, details } = body.error;
  let { message } = body.error;
  const hints = (details ?? []).map(
    (d) => `  ${d.path || '(body)'}${d.line ? `:${d.line}:${d.column}` : ''}: ${d.message}`,
  );
  if (code === 'unauthenticated' || code === 'forbidden') {
    const hint = authHint(code, refused);
    if (hint) hints.push(hint);
  }
  if (refused.retryAfter !== undefined) {
    const wait = `try again in ${refused.retryAfter} s`;
    if (message.includes('try again later')) message = message.replace('try again later', wait);
    else hints.push(`The server asks to ${wait}.`);
  }
  return new CliError(message, exitCodeForApiError(code), hints, code);
}

/** What to do after a 401 or 403, given what the server refused. */
function authHint(code: 'unauthenticated' | 'forbidden', refused: Refused): string | undefined {
  if (refused.tokenSource === undefined) {
    // Sent without a token: the password, key or secret in the body is what was refused.
    if (refused.path.startsWith('/api/tokens/create/user')) {
      return code === 'unauthenticated'
        ? 'Check the username and password (the password is read from standard input).'
        : 'Check --tenant: the user must be a member of that tenant (an admin of it can add you).';
    }
    if (refused.path.startsWith('/api/tokens/create/api')) {
      return code === 'unauthenticated'
        ? 'Check the key: an API key (slk_...) or worker key (slw_...) exactly as printed when it was ' +
            'created, read from standard input (`sluice worker run` takes SLUICE_WORKER_KEY first); ' +
            'it may also have been deleted, rotated or expired.'
        : undefined;
    }
    if (refused.path.startsWith('/api/workers/enroll')) {
      return code === 'unauthenticated'
        ? 'Check the enrollment secret (sle_..., read from standard input): it may be mistyped, ' +
            'expired or used up; an admin can create a new one.'
        : undefined;
    }
    return code === 'unauthenticated' ? 'Check the credential you sent.' : undefined;
  }
  if (code === 'forbidden') {
    if (isOwnPasswordChange(refused)) {
      return 'The current password (asked for first, or the first line on standard input) was wrong; wrong attempts count toward the failed-login limit.';
    }
    return 'Your role does not allow this; ask an admin of this tenant.';
  }
  switch (refused.tokenSource) {
    case 'env':
      return (
        'The token in SLUICE_TOKEN is invalid or expired, and it takes precedence over the stored login: ' +
        '`unset SLUICE_TOKEN` to use your login (`sluice login`), or set it to a new token (`sluice token user ...`).'
      );
    case 'flag':
      return (
        'The token given with --token is invalid or expired: pass a new one (`sluice token user ...`), ' +
        'or leave --token out to use your stored login (`sluice login`).'
      );
    case 'stdin':
      return 'The token read with --token-stdin is invalid or expired: pipe a new one (`sluice token user ...`).';
    case 'login': {
      const login = refused.login;
      if (!login)
        return 'Your stored login is no longer valid (expired or revoked): run `sluice login` again.';
      return (
        `The stored login for ${refused.server} (${login.username}, tenant ${login.tenant}; ` +
        `it expires at ${login.expires_at}${relativeTime(login.expires_at) ? `, ${relativeTime(login.expires_at)}` : ''}) ` +
        'was refused: it was revoked (a password change, or the user removed), or the server no longer has the key ' +
        `that signed it; run \`sluice login\` again, as \`sluice login ${login.username}\`.`
      );
    }
    default:
      return 'The token is invalid, expired or revoked.';
  }
}

/** `sluice user passwd` of your own password: the request carries `current_password`. */
function isOwnPasswordChange(refused: Refused): boolean {
  return (
    refused.method === 'POST' &&
    /^\/api\/users\/[^/]+\/password$/.test(refused.path) &&
    typeof refused.body === 'object' &&
    refused.body !== null &&
    'current_password' in refused.body
  );
}

function connectionError(server: string, err: unknown): CliError {
  const code = (err as { code?: string }).code ?? '';
  const hints: string[] = [];
  if (
    code.includes('CERT') ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN'
  ) {
    hints.push(
      'The server certificate is not trusted. For the local stack pass --ca-file .sluice/tls/cert.pem (or --insecure).',
    );
  } else {
    hints.push(
      'Is the server running? Check --server / SLUICE_SERVER (`npm start` serves https://127.0.0.1:8443).',
    );
  }
  return new CliError(`cannot reach ${server}: ${(err as Error).message}`, EXIT.error, hints);
}
