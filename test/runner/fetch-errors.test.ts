/**
 * What the HTTP input and output say when a request fails (functions/runner/fetch-errors.ts):
 * fetch's `cause` added, a URL's credentials left out.
 */
import { describe, expect, it } from 'vitest';
import {
  describeFetchError,
  requestFailed,
  withoutUrlCredentials,
} from '../../functions/runner/fetch-errors.ts';

const fetchFailed = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause });

describe('describeFetchError', () => {
  it('adds the cause: its code and message, the code once', () => {
    const tls = Object.assign(new Error('self-signed certificate in certificate chain'), {
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    expect(describeFetchError(fetchFailed(tls))).toBe(
      'fetch failed (SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain)',
    );
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND example.test'), { code: 'ENOTFOUND' });
    expect(describeFetchError(fetchFailed(dns))).toBe('fetch failed (getaddrinfo ENOTFOUND example.test)');
    expect(describeFetchError(fetchFailed(new Error('bad port')))).toBe('fetch failed (bad port)');
    expect(describeFetchError(fetchFailed(Object.assign(new Error(''), { code: 'ECONNRESET' })))).toBe(
      'fetch failed (ECONNRESET)',
    );
  });

  it('takes the first of a cause that gathers several (each address tried)', () => {
    const refused = Object.assign(
      new AggregateError([
        new Error('connect ECONNREFUSED ::1:9'),
        new Error('connect ECONNREFUSED 127.0.0.1:9'),
      ]),
      { code: 'ECONNREFUSED' },
    );
    expect(describeFetchError(fetchFailed(refused))).toBe('fetch failed (connect ECONNREFUSED ::1:9)');
  });

  it('gives an error without a cause as it is, and anything thrown as text, at most 300 characters', () => {
    expect(describeFetchError(new Error('The operation was aborted due to timeout'))).toBe(
      'The operation was aborted due to timeout',
    );
    expect(describeFetchError('boom')).toBe('boom');
    expect(describeFetchError(fetchFailed(new Error('x'.repeat(1000))))).toHaveLength(300);
  });
});

describe('requestFailed and withoutUrlCredentials', () => {
  it('leave out a URL’s user name and password, wherever the URL appears', () => {
    const url = 'http://reader:p@ss:w0rd@127.0.0.1:8080/x?page=1';
    const err = new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url}`);
    const message = requestFailed(url, err);
    expect(message).toBe(
      'request to http://***@127.0.0.1:8080/x?page=1 failed: Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:8080/x?page=1',
    );
    expect(withoutUrlCredentials('https://api.example.com/a@b?c=d@e')).toBe(
      'https://api.example.com/a@b?c=d@e',
    );
    expect(withoutUrlCredentials('see https://u@h/ and ftp://a:b@c')).toBe(
      'see https://***@h/ and ftp://***@c',
    );
  });
});
