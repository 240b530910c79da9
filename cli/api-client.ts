/**
 * The CLI's HTTP client for the Sluice API: TLS options from the global flags,
 * the bearer token in a header (never in a URL), and the contract's error body
 * turned into a `CliError` with the right exit code and a hint of what to do next.
 *
 * @example
 *   const api = new ApiClient({ server, token, insecure: false });
 *   const me = await api.get('/api/auth/me');
 */

import { readFileSync } from 'node:fs';
import type { Agent, Dispatcher } from 'undici';
import { MAX_PAGE_SIZE, NEXT_PAGE_HEADER } from '../shared/api/paging.ts';
import type { ErrorBody } from '../shared/errors.ts';
import { CliError, EXIT, exitCodeForApiError } from './exit-codes.ts';
import { checkServerTransport } from './transport.ts';

export interface ApiClientOptions {
  server: string;
  token?: string | undefined;
  caFile?: string | undefined;
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
    this.ca = options.caFile ? readFileSync(options.caFile) : undefined;
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
      if (!this.options.token) {
        throw new CliError('not logged in', EXIT.auth, [
          'Run `sluice login USERNAME --password-stdin`, or set SLUICE_TOKEN / --token-stdin.',
        ]);
      }
      headers.authorization = `Bearer ${this.options.token}`;
    }
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      body = opts.contentType ? String(opts.body) : JSON.stringify(opts.body);
    }
    let res: Awaited<ReturnType<Request>>;
    try {
      const { agent, request } = await this.connection();
      res = await request(url, { method, headers, body, dispatcher: agent });
    } catch (err) {
      throw connectionError(this.server, err);
    }
    const text = await res.body.text();
    if (res.statusCode >= 400) throw apiError(res.statusCode, text);
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

function apiError(status: number, text: string): CliError {
  let body: ErrorBody | undefined;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not our error body (a proxy, perhaps).
  }
  if (!body?.error) return new CliError(`server answered ${status}: ${text.slice(0, 200)}`, EXIT.error);
  const { code, message, details } = body.error;
  const hints = (details ?? []).map(
    (d) => `  ${d.path || '(body)'}${d.line ? `:${d.line}:${d.column}` : ''}: ${d.message}`,
  );
  if (code === 'unauthenticated')
    hints.push('Your token is missing, invalid or expired: run `sluice login` again.');
  if (code === 'forbidden') hints.push('Your role does not allow this; ask an admin of this tenant.');
  return new CliError(message, exitCodeForApiError(code), hints);
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
