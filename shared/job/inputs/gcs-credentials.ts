/**
 * What a `gcs` job's `credentials.*.key` may be: a Google service-account key, and
 * nothing else. Google's auth library also accepts other credential files, and some of
 * them act: an `external_account` key makes it read a URL or a file the key names (the
 * metadata server's token, `/proc/self/environ`) and post what it read to the key's
 * `token_url`. So only `type: service_account` is accepted, and the client is built from
 * `client_email` and `private_key` alone (a key's own `token_uri` is ignored too).
 *
 * A key may come from `${secret|...}` or `{{...}}`: such a key is checked where it is
 * resolved, on the worker, by the same function.
 *
 * @example
 *   const parsed = parseServiceAccountKey(text);
 *   if (!parsed.ok) throw new Error(parsed.message);
 */

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  project_id?: string;
}

export type KeyCheck = { ok: true; key: ServiceAccountKey } | { ok: false; message: string };

const EMAIL = /^[^@\s]+@[^@\s]+$/;
const PEM_KEY = /-----BEGIN (RSA )?PRIVATE KEY-----/;

export function parseServiceAccountKey(text: string): KeyCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      ok: false,
      message: 'the credentials key is not valid JSON (expected a service-account key file)',
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'the credentials key must be a service-account key (a JSON object)' };
  }
  const key = value as Record<string, unknown>;
  if (key.type !== 'service_account') {
    return {
      ok: false,
      message: `the credentials key must be a service-account key ("type": "service_account"), not ${typeof key.type === 'string' ? `"${key.type}"` : 'one without a type'}: other kinds of credentials make the runner fetch URLs and read files the key names`,
    };
  }
  if (typeof key.client_email !== 'string' || !EMAIL.test(key.client_email))
    return { ok: false, message: 'the service-account key has no client_email' };
  if (typeof key.private_key !== 'string' || !PEM_KEY.test(key.private_key))
    return { ok: false, message: 'the service-account key has no private_key (PEM)' };
  return {
    ok: true,
    key: {
      client_email: key.client_email,
      private_key: key.private_key,
      ...(typeof key.project_id === 'string' ? { project_id: key.project_id } : {}),
    },
  };
}

/** True when the text holds a `${...}` or `{{...}}` reference: it is checked once resolved. */
export function resolvedLater(text: string): boolean {
  return /\$\{|\{\{/.test(text);
}
