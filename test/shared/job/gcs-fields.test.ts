import { describe, expect, it } from 'vitest';
import { gcsFields } from './helpers.ts';

describe('the gcs input: defaults', () => {
  it('applies the seed defaults to a minimal input', () => {
    const r = gcsFields({});
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.gcs).toMatchObject({
      'payload-mode': 'auto',
      mode: 'list-and-download-objects',
      'ignore-linebreaks': false,
      'timestamp-mode': 'none',
      preprocessors: [],
      fingerprinting: false,
      'maximum-fingerprint-age': '30d',
      retry: { timeout: 30 },
    });
  });

  it('requires bucket-name, credentials and object-names (which may be empty)', () => {
    const r = gcsFields({ 'bucket-name': undefined, credentials: undefined, 'object-names': undefined });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.message)).toEqual(
      expect.arrayContaining([
        'required field `bucket-name` is missing',
        'required field `credentials` is missing',
        'required field `object-names` is missing',
      ]),
    );
  });
});

const SERVICE_ACCOUNT_KEY = JSON.stringify({
  type: 'service_account',
  client_email: 'reader@acme.iam.gserviceaccount.com',
  private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
});

const ACCEPTED: [string, unknown][] = [
  ['payload-mode', 'auto'],
  ['payload-mode', 'json'],
  ['payload-mode', 'raw'],
  ['payload-mode', 'binary'],
  ['mode', 'list-objects'],
  ['mode', 'download-objects'],
  ['ignore-linebreaks', true],
  ['timestamp-mode', 'last-modified'],
  ['timestamp-mode', { none: {} }],
  ['timestamp-mode', { 'last-modified': {} }],
  ['timestamp-mode', { 'object-name-pattern': 'logs/(?P<Y>\\d{4})/(?P<m>\\d{2})/(?P<d>\\d{2})' }],
  ['timestamp-mode', { 'object-name-pattern': '(?<Y>\\d{4})(?<m>\\d{2})(?<d>\\d{2})T(?<H>\\d{2})' }],
  ['include-regex', ['\\.json$', '^logs/']],
  ['exclude-regex', ['_tmp']],
  ['object-names', ['logs/2026/', 'single.json']],
  ['object-name-field', 'object'],
  ['creation-time-field', 'created_at'],
  ['last-modified-field', 'meta.modified'],
  ['content-length-field', 'size'],
  ['content-type-field', 'type'],
  ['etag-field', 'etag'],
  ['data-field', 'data'],
  ['preprocessors', ['extension']],
  ['preprocessors', ['gzip', 'parquet', 'base64']],
  ['fingerprinting', true],
  ['maximum-fingerprint-age', '7d'],
  ['retry', { timeout: '500ms', retries: 3 }],
  ['retry', { timeout: 30 }],
  ['credentials', { 'storage-url': 'gs://acme-logs', 'service-account': { path: '/etc/sa.json' } }],
  ['credentials', { 'storage-url': 'gs://acme-logs', 'service-account': { key: SERVICE_ACCOUNT_KEY } }],
  ['credentials', { 'storage-url': 'gs://acme-logs/', 'application-credentials': { path: '/etc/adc.json' } }],
  [
    'credentials',
    { 'storage-url': 'gs://acme-logs', 'application-credentials': { key: SERVICE_ACCOUNT_KEY } },
  ],
  ['credentials', { 'storage-url': 'gs://acme-logs', 'service-account': { key: '${secret|gcp/key}' } }],
];

const REJECTED: [string, unknown, string][] = [
  ['payload-mode', 'jsonl', '`jsonl` is not allowed here; did you mean `json`?'],
  ['mode', 'list', 'is not allowed here'],
  // A path would be ignored: refused, and the message says where a prefix goes.
  [
    'credentials',
    { 'storage-url': 'gs://acme-logs/prefix' },
    'must be gs:// followed by the bucket alone, e.g. gs://my-bucket; to read only some objects, give their prefix in object-names',
  ],
  ['ignore-linebreaks', 'yes', 'expected true or false, got a string ("yes")'],
  ['timestamp-mode', 'modified', 'is not allowed here'],
  ['timestamp-mode', { 'object-name-pattern': '(?P<Y>\\d{4})' }, 'needs named groups (?P<m>...), (?P<d>...)'],
  ['timestamp-mode', { 'object-name-pattern': '(\\d+)\\1' }, 'backreferences'],
  ['timestamp-mode', { none: {}, 'last-modified': {} }, 'exactly one of'],
  ['maximum-age', { value: '5 minutes' }, 'is not a duration'],
  // It would be ignored without a timestamp: refused, with the fix.
  [
    'maximum-age',
    { value: '1h30m' },
    "compares each object's timestamp, and timestamp-mode is none: set timestamp-mode: last-modified",
  ],
  ['maximum-age', '5m', 'must be a map of fields'],
  ['include-regex', ['(?=lookahead)'], 'lookahead and lookbehind are not supported'],
  ['exclude-regex', ['[unclosed'], 'invalid regular expression'],
  ['include-regex', '\\.json$', 'expected a list'],
  ['bucket-name', 'Bad Bucket', 'must be a bucket name'],
  ['object-names', 'logs/', 'expected a list'],
  ['object-name-field', 'has space', 'must be a field name'],
  ['data-field', 7, 'expected a string'],
  ['preprocessors', ['zip'], 'is not allowed here'],
  ['fingerprinting', 1, 'expected true or false'],
  ['maximum-fingerprint-age', '30', 'needs a unit'],
  ['retry', { retries: 3 }, 'required field `timeout` is missing'],
  ['retry', { timeout: '2s', retries: -1 }, 'must be at least 0'],
  ['retry', { timeout: '2s', retries: 1.5 }, 'expected an integer'],
  ['credentials', { 'storage-url': 's3://bucket' }, 'must be gs:// followed by the bucket'],
  ['credentials', { 'storage-url': 'gs://b-1', 'service-account': {} }, 'exactly one of: path, key'],
  [
    'credentials',
    { 'storage-url': 'gs://b-1', 'service-account': { path: 'a', key: 'b' } },
    'exactly one of path, key',
  ],
  [
    'credentials',
    { 'storage-url': 'gs://b-1', 'service-account': { path: 'a' }, 'application-credentials': { path: 'b' } },
    'not both',
  ],
  ['credentials', { storage_url: 'gs://b' }, 'did you mean `storage-url`?'],
  [
    'credentials',
    { 'storage-url': 'gs://other-logs' },
    'names bucket other-logs but bucket-name is acme-logs',
  ],
];

describe('the gcs input: every field', () => {
  it.each(ACCEPTED)('accepts %s = %j', (field, value) => {
    const r = gcsFields({ [field]: value });
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('accepts maximum-age with a timestamp mode', () => {
    for (const mode of [
      'last-modified',
      { 'object-name-pattern': '(?P<Y>\\d{4})(?P<m>\\d\\d)(?P<d>\\d\\d)' },
    ]) {
      const r = gcsFields({ 'maximum-age': { value: '1h30m' }, 'timestamp-mode': mode });
      expect(r.ok ? [] : r.errors).toEqual([]);
    }
  });

  it.each(REJECTED)('rejects %s = %j', (field, value, message) => {
    const r = gcsFields({ [field]: value });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.message).join(' | ')).toContain(message);
    expect(r.errors.every((e) => e.path.startsWith(`input.gcs`))).toBe(true);
  });

  it('accepts any valid bucket name that storage-url names too', () => {
    const r = gcsFields({
      'bucket-name': 'my.bucket_name-1',
      credentials: { 'storage-url': 'gs://my.bucket_name-1' },
    });
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('checks storage-url against bucket-name only once both are known (not while they are templates)', () => {
    const r = gcsFields(
      { 'bucket-name': '{{bucket}}', credentials: { 'storage-url': 'gs://acme-logs' } },
      'saved',
    );
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('suggests the closest field for an unknown one', () => {
    const r = gcsFields({ bucket_name: 'x' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toContainEqual({
      path: 'input.gcs.bucket_name',
      message: 'unknown field `bucket_name` at input.gcs; did you mean `bucket-name`?',
    });
  });
});

describe('validation levels', () => {
  it('accepts {{...}} references for typed values when saved, and checks the real type when rendered', () => {
    const templated = { fingerprinting: '{{fp}}', 'maximum-fingerprint-age': '{{age}}', mode: '{{mode}}' };
    expect(gcsFields(templated, 'saved').ok).toBe(true);
    const rendered = gcsFields(templated, 'rendered');
    expect(rendered.ok).toBe(false);
  });

  it('does not take an escaped \\{{ for a reference', () => {
    expect(gcsFields({ fingerprinting: '\\{{fp}}' }, 'saved').ok).toBe(false);
  });
});
