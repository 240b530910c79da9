/**
 * HTTP requests to addresses a job names, through the egress policy: the host is
 * resolved once, every address it resolves to is checked, and the connection goes to
 * the checked address (so a name cannot resolve to something else between the check and
 * the connect). Redirects are followed here, not by fetch, each hop checked the same way,
 * and at most `maxRedirects` of them (with 0, a 3xx is returned as the answer). The body is read up to `maxBytes`.
 *
 * @example
 *   const res = await guardedFetch('https://api.example.com/x', { method: 'GET', signal }, { policy, maxBytes: 16 << 20 });
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Agent, Dispatcher } from 'undici';
import type { EgressPolicy } from './policy.ts';

export const DEFAULT_MAX_REDIRECTS = 5;

/** A connection the egress policy refused: `egress refused: <address>: <reason>`. */
export class EgressRefusedError extends Error {
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`egress refused: ${address}: ${reason}`);
    this.name = 'EgressRefusedError';
  }
}

/** The answer was larger than the job allows. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response too large: more than ${limit} bytes (the limit is max-response-size: ${limit} bytes)`);
    this.name = 'ResponseTooLargeError';
  }
}

export interface GuardedRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  ok: boolean;
  url: string;
  /** The answer's headers (e.g. Retry-After). */
  headers: { get(name: string): string | null };
  body: Uint8Array;
}

export interface GuardOptions {
  policy: EgressPolicy;
  maxBytes: number;
  maxRedirects?: number;
}

export async function guardedFetch(
  url: string,
  request: GuardedRequest,
  options: GuardOptions,
): Promise<GuardedResponse> {
  const { fetch } = await import('undici');
  const dispatcher = await agentFor(options.policy);
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let current = new URL(url);
  let { method, body } = request;
  let headers = { ...request.headers };
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw new Error(`refused to follow a redirect to ${current.protocol} (only http and https)`);
    checkLiteralHost(current.hostname, options.policy);
    let res: Awaited<ReturnType<typeof fetch>>;
    try {
      res = await fetch(current, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        redirect: 'manual',
        signal: request.signal,
        dispatcher,
      });
    } catch (err) {
      throw egressCause(err) ?? err;
    }
    const location = res.headers.get('location');
    // With no redirect allowed the answer is the caller's to judge (a status, not a failed request).
    if (res.status >= 300 && res.status < 400 && location && maxRedirects > 0) {
      await res.body?.cancel().catch(() => {});
      if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects from ${url}`);
      const next = new URL(location, current);
      // Credentials set for one origin are not handed to another (as browsers do).
      if (next.origin !== current.origin) headers = withoutCredentials(headers);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      current = next;
      continue;
    }
    return {
      status: res.status,
      ok: res.ok,
      url: current.href,
      headers: res.headers,
      body: await readCapped(res.body, res.headers.get('content-length'), options.maxBytes),
    };
  }
}

/** An IP literal in the URL is never looked up, so it is checked here rather than at connect time. */
function checkLiteralHost(hostname: string, policy: EgressPolicy): void {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const nameRefusal = policy.refusalForName(bare);
  if (nameRefusal) throw new EgressRefusedError(bare, nameRefusal);
  if (!isIP(bare)) return;
  const reason = policy.refusal(bare);
  if (reason) throw new EgressRefusedError(bare, reason);
}

async function readCapped(
  stream: { getReader(): ReadableStreamDefaultReader<Uint8Array>; cancel(): Promise<void> } | null,
  contentLength: string | null,
  maxBytes: number,
): Promise<Uint8Array> {
  if (!stream) return new Uint8Array();
  if (contentLength !== null && Number(contentLength) > maxBytes) {
    await stream.cancel().catch(() => {});
    throw new ResponseTooLargeError(maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !/^(authorization|cookie|proxy-authorization)$/i.test(name)),
  );
}

function egressCause(err: unknown): EgressRefusedError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefusedError) return e;
  }
  return undefined;
}

const agents = new WeakMap<EgressPolicy, Agent>();

/** One connection pool per policy; its connector resolves, checks and then connects to the checked address. */
async function agentFor(policy: EgressPolicy): Promise<Dispatcher> {
  const existing = agents.get(policy);
  if (existing) return existing;
  const { Agent, buildConnector } = await import('undici');
  const connect = buildConnector({});
  const agent = new Agent({
    connect(options, callback) {
      resolveChecked(options.hostname, policy).then(
        (address) => connect({ ...options, hostname: address }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
  agents.set(policy, agent);
  return agent;
}

/** Resolves `hostname` and returns its first address if every address it resolves to is allowed. */
async function resolveChecked(hostname: string, policy: EgressPolicy): Promise<string> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const nameRefusal = policy.refusalForName(bare);
  if (nameRefusal) throw new EgressRefusedError(bare, nameRefusal);
  const addresses = isIP(bare)
    ? [bare]
    : (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  // One refused address refuses the name: otherwise a name could pair a public and an internal address.
  for (const address of addresses) {
    const reason = policy.refusal(address);
    if (reason) throw new EgressRefusedError(isIP(bare) ? bare : `${bare} (${address})`, reason);
  }
  return addresses[0]!;
}
