/**
 * The `gcs` input, field by field, against the project's Cloud Storage emulator.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GcsTestEnv, gcsJob, gcsTestEnv } from './helpers.ts';
import { writeParquet } from './parquet-fixture.ts';

let env: GcsTestEnv;
let bucketCounter = 0;

beforeAll(async () => {
  env = await gcsTestEnv();
});
afterAll(async () => {
  await env.stop();
});
beforeEach(async () => {
  // A fresh bucket per test: tests don't see each other's objects.
  env.bucket = `bucket-${++bucketCounter}`;
  await env.storage.createBucket(env.bucket);
});

const names = (events: Record<string, unknown>[], field = 'object') => events.map((e) => e[field]);

describe('mode', () => {
  it('list-and-download-objects reads every line of every object', async () => {
    await env.put('a.json', '{"n":1}\n{"n":2}\n');
    await env.put('b.json', '{"n":3}\n');
    const { events } = await env.run({});
    expect(events.map((e) => e.n).sort()).toEqual([1, 2, 3]);
  });

  it('list-objects gives one event per object with its metadata and downloads nothing', async () => {
    await env.put('a.json', '{"n":1}\n{"n":2}\n', { contentType: 'application/json' });
    env.emulator.resetStats();
    const { events } = await env.run({ mode: 'list-objects', 'object-name-field': 'object' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      name: 'a.json',
      object: 'a.json',
      size: 16,
      content_type: 'application/json',
    });
    expect(env.emulator.stats().download).toBe(0);
  });

  it('download-objects fetches exactly the named objects and reports missing ones', async () => {
    await env.put('a.json', '{"n":1}\n');
    await env.put('b.json', '{"n":2}\n');
    const { events, reports } = await env.run({
      mode: 'download-objects',
      'object-names': ['b.json', 'missing.json'],
    });
    expect(events.map((e) => e.n)).toEqual([2]);
    expect(reports.find((r) => r.type === 'job-errors')?.payload).toMatchObject({ object: 'missing.json' });
  });
});

describe('object selection', () => {
  beforeEach(async () => {
    for (const name of ['logs/a.json', 'logs/b.txt', 'other/c.json', 'logsx/d.json'])
      await env.put(name, `{"n":1}\n`);
  });

  it('object-names are prefixes', async () => {
    const { events } = await env.run({ 'object-names': ['logs/', 'other/c'], 'object-name-field': 'object' });
    expect(names(events).sort()).toEqual(['logs/a.json', 'logs/b.txt', 'other/c.json']);
  });

  it('empty object-names reads every object and warns when the listing gets large', async () => {
    const { events, reports } = await env.run({}, { largeListingWarning: 3 });
    expect(events).toHaveLength(4);
    expect(reports.find((r) => r.payload.reason === 'large-listing')?.type).toBe('job-errors');
  });

  it('include-regex and exclude-regex match the full name', async () => {
    const { events, ended } = await env.run({
      'include-regex': ['^logs'],
      'exclude-regex': ['\\.txt$'],
      'object-name-field': 'object',
    });
    expect(names(events).sort()).toEqual(['logs/a.json', 'logsx/d.json']);
    expect(ended.skipped).toEqual({ 'not-included': 1, excluded: 1 });
  });
});

describe('timestamps', () => {
  it('object-name-pattern with maximum-age skips old objects and those without a date', async () => {
    const today = new Date();
    const old = new Date(Date.now() - 10 * 86_400_000);
    const path = (d: Date) => d.toISOString().slice(0, 10).replaceAll('-', '/');
    await env.put(`logs/${path(today)}/new.json`, '{"n":1}\n');
    await env.put(`logs/${path(old)}/old.json`, '{"n":2}\n');
    await env.put('logs/undated.json', '{"n":3}\n');
    const { events, ended } = await env.run({
      'timestamp-mode': { 'object-name-pattern': '^logs/(?P<Y>\\d{4})/(?P<m>\\d{2})/(?P<d>\\d{2})/' },
      'maximum-age': { value: '2d' },
    });
    expect(events.map((e) => e.n)).toEqual([1]);
    expect(ended.skipped).toMatchObject({ 'no-timestamp': 1 });
  });

  it('object-name-pattern uses H, M, S when present, and the window bounds the objects', async () => {
    await env.put('t/2026-03-01T10:15:00.json', '{"n":1}\n');
    await env.put('t/2026-03-01T11:15:00.json', '{"n":2}\n');
    const { events } = await env.run(
      {
        'timestamp-mode': {
          'object-name-pattern':
            '^t/(?P<Y>\\d{4})-(?P<m>\\d{2})-(?P<d>\\d{2})T(?P<H>\\d{2}):(?P<M>\\d{2}):(?P<S>\\d{2})',
        },
      },
      { window: { start: new Date('2026-03-01T11:00:00Z'), end: new Date('2026-03-01T12:00:00Z') } },
    );
    expect(events.map((e) => e.n)).toEqual([2]);
  });

  it('last-modified compares the time the store reports', async () => {
    await env.put('a.json', '{"n":1}\n');
    const fresh = await env.run({ 'timestamp-mode': 'last-modified', 'maximum-age': { value: '1h' } });
    expect(fresh.events).toHaveLength(1);
    const later = await env.run(
      { 'timestamp-mode': 'last-modified', 'maximum-age': { value: '1h' } },
      { now: () => new Date(Date.now() + 2 * 3_600_000) },
    );
    expect(later.events).toHaveLength(0);
    expect(later.ended.skipped).toEqual({ 'too-old': 1 });
  });

  it('refuses maximum-age or a window with timestamp-mode none, instead of ignoring them', () => {
    expect(() => gcsJob(env.bucket, { 'timestamp-mode': 'none', 'maximum-age': { value: '1s' } })).toThrow(
      /maximum-age.*timestamp-mode is none: set timestamp-mode: last-modified/,
    );
    expect(() =>
      gcsJob(env.bucket, { trigger: { interval: { duration: '1h', window: { size: '1h' } } } }),
    ).toThrow(/window.*timestamp-mode is none/);
  });
});

describe('payload', () => {
  it('auto parses JSON lines, keeps other lines in _raw and expands one-line JSON arrays', async () => {
    await env.put('a.log', '{"n":1}\nplain text\n[{"n":2},{"n":3}]\n\n');
    const { events } = await env.run({});
    expect(events).toEqual([{ n: 1 }, { _raw: 'plain text' }, { n: 2 }, { n: 3 }]);
  });

  it('json reports lines that do not parse and reads the rest', async () => {
    await env.put('a.json', '{"n":1}\nnot json\n{"n":2}\n');
    const { events, reports } = await env.run({ 'payload-mode': 'json' });
    expect(events).toEqual([{ n: 1 }, { n: 2 }]);
    expect(reports.find((r) => r.type === 'job-errors')?.payload).toMatchObject({
      object: 'a.json',
      reason: 'invalid-json',
    });
  });

  it('json splits a pretty-printed array into one event per element', async () => {
    await env.put(
      'a.json',
      JSON.stringify([{ n: 1, s: 'a,]}' }, { n: 2, nested: [1, { x: 2 }] }, 3], null, 2),
    );
    const { events } = await env.run({ 'payload-mode': 'json' });
    expect(events).toEqual([{ n: 1, s: 'a,]}' }, { n: 2, nested: [1, { x: 2 }] }, { _raw: 3 }]);
  });

  it('raw keeps every line as text', async () => {
    await env.put('a.json', '{"n":1}\r\nsecond\n');
    const { events } = await env.run({ 'payload-mode': 'raw' });
    expect(events).toEqual([{ _raw: '{"n":1}' }, { _raw: 'second' }]);
  });

  it('binary makes the whole object one event, base64-encoded', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    await env.put('a.bin', bytes);
    const { events } = await env.run({ 'payload-mode': 'binary', 'data-field': 'data' });
    expect(events).toEqual([{ data: bytes.toString('base64') }]);
  });

  it('ignore-linebreaks makes the whole object one event', async () => {
    await env.put('a.json', '{\n  "n": 1,\n  "m": 2\n}\n');
    await env.put('b.txt', 'line one\nline two\n');
    const { events } = await env.run({ 'ignore-linebreaks': true });
    expect(events).toEqual([{ n: 1, m: 2 }, { _raw: 'line one\nline two\n' }]);
  });

  it('a line over the limit is reported and skipped, the others are read', async () => {
    await env.put('a.json', `{"n":1}\n${'x'.repeat(5000)}\n{"n":2}\n`);
    const { events, reports } = await env.run({}, { maxLineBytes: 1000 });
    expect(events).toEqual([{ n: 1 }, { n: 2 }]);
    expect(reports.find((r) => r.type === 'job-errors')?.payload).toMatchObject({
      reason: 'line-too-long',
      line: 2,
    });
  });
});

describe('fields', () => {
  it('every metadata *-field receives its value and data-field receives the data', async () => {
    await env.put('a.json', '{"n":1}\n', { contentType: 'application/x-ndjson' });
    const [meta] = await env.storage.bucket(env.bucket).file('a.json').getMetadata();
    const { events } = await env.run({
      'object-name-field': 'object',
      'creation-time-field': 'created',
      'last-modified-field': 'modified',
      'content-length-field': 'length',
      'content-type-field': 'type',
      'etag-field': 'etag',
      'data-field': 'data',
    });
    expect(events).toEqual([
      {
        data: { n: 1 },
        object: 'a.json',
        created: meta.timeCreated,
        modified: meta.updated,
        length: 8,
        type: 'application/x-ndjson',
        etag: meta.etag,
      },
    ]);
  });

  it('without data-field, JSON objects merge and a requested field wins over the data', async () => {
    await env.put('a.json', '{"object":"from data","n":1}\n"just a string"\n');
    const { events } = await env.run({ 'object-name-field': 'object' });
    expect(events).toEqual([
      { object: 'a.json', n: 1 },
      { _raw: 'just a string', object: 'a.json' },
    ]);
  });
});

describe('preprocessors', () => {
  it('a damaged or truncated gzip object fails alone: reported as damaged (done with until rewritten), the others read', async () => {
    const good = gzipSync(Array.from({ length: 20_000 }, (_, i) => `{"n":${i}}`).join('\n'));
    await env.put('good.json.gz', good);
    // Cut in the middle: the stream ends early. Bytes flipped: the data is wrong.
    await env.put('cut.json.gz', good.subarray(0, Math.floor(good.length / 2)));
    const flipped = Buffer.from(good);
    for (let i = 100; i < 200; i++) flipped[i] = flipped[i]! ^ 0xff;
    await env.put('flipped.json.gz', flipped);
    const { events, reports, ended } = await env.run({ preprocessors: ['extension'] });
    const failed = reports
      .filter((r) => r.type === 'job-errors')
      .map((r) => r.payload.object)
      .sort();
    expect(failed).toEqual(['cut.json.gz', 'flipped.json.gz']);
    expect(ended).toMatchObject({ damaged_objects: 2, failed_objects: 0, failed: false });
    expect(reports.filter((r) => r.type === 'job-errors').map((r) => r.payload.reason)).toEqual([
      'damaged-object',
      'damaged-object',
    ]);
    // Every line of the good object; what the damaged ones gave before failing may come too.
    expect(new Set(events.map((e) => e.n)).size).toBe(20_000);
  });

  const lines = '{"n":1}\n{"n":2}\n';

  it('gzip decompresses, and passes data through that is not gzip', async () => {
    await env.put('a.json', gzipSync(lines));
    await env.put('b.json', lines);
    const { events } = await env.run({ preprocessors: ['gzip'] });
    expect(events).toHaveLength(4);
  });

  it('an object stored with Content-Encoding: gzip is decompressed once, also with gzip/extension', async () => {
    await env.put('a.json.gz', gzipSync(lines), { contentEncoding: 'gzip' });
    for (const preprocessors of [[], ['gzip'], ['extension']]) {
      const { events } = await env.run({ preprocessors });
      expect(events).toEqual([{ n: 1 }, { n: 2 }]);
    }
  });

  it('extension picks gzip for .gz, parquet for .parquet and .parquet.gz, nothing otherwise', async () => {
    const parquet = await writeParquet(
      "SELECT i AS id, 'x' || i AS label, i::BIGINT * 1000000000000 AS big FROM range(5) t(i)",
      2,
    );
    await env.put('a.json.gz', gzipSync(lines));
    await env.put('b.parquet', parquet);
    await env.put('c.parquet.gz', gzipSync(parquet));
    await env.put('d.json', lines);
    const { events } = await env.run({ preprocessors: ['extension'], 'object-name-field': 'object' });
    const by = (name: string) => events.filter((e) => e.object === name).map(({ object, ...rest }) => rest);
    expect(by('a.json.gz')).toEqual([{ n: 1 }, { n: 2 }]);
    const rows = [0, 1, 2, 3, 4].map((i) => ({ id: i, label: `x${i}`, big: i * 1_000_000_000_000 }));
    expect(by('b.parquet')).toEqual(rows);
    expect(by('c.parquet.gz')).toEqual(rows);
    expect(by('d.json')).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('parquet rows take data-field and the *-fields; a .parquet object that is not parquet is reported', async () => {
    await env.put('good.parquet', await writeParquet("SELECT 7 AS n, 'x' AS s"));
    await env.put('bad.parquet', Buffer.from('PAR1 not really PAR1'));
    const { events, reports, ended } = await env.run({
      preprocessors: ['extension'],
      'data-field': 'row',
      'object-name-field': 'object',
    });
    expect(events).toEqual([{ row: { n: 7, s: 'x' }, object: 'good.parquet' }]);
    expect(reports.find((r) => r.type === 'job-errors')?.payload).toMatchObject({ object: 'bad.parquet' });
    expect(ended).toMatchObject({ failed_objects: 1 });
  });

  it('base64 encodes the data; the object becomes one event', async () => {
    const bytes = Buffer.from('hello\nworld\n\u00ff');
    await env.put('a.bin', bytes);
    const { events } = await env.run({ preprocessors: ['base64'], 'payload-mode': 'raw' });
    expect(events).toEqual([{ _raw: bytes.toString('base64') }]);
    const binary = await env.run({ preprocessors: ['base64'], 'payload-mode': 'binary' });
    expect(binary.events).toEqual([{ _raw: bytes.toString('base64') }]);
  });

  it('preprocessors run in the listed order (gzip then base64)', async () => {
    await env.put('a.txt', gzipSync('abc'));
    const { events } = await env.run({ preprocessors: ['gzip', 'base64'], 'payload-mode': 'raw' });
    expect(events).toEqual([{ _raw: Buffer.from('abc').toString('base64') }]);
  });
});

describe('credentials and retry', () => {
  it('a service-account key that is not JSON fails clearly', async () => {
    const { storageOptions } = await import('../../functions/runner/inputs/gcs/client.ts');
    expect(() => storageOptions({ 'storage-url': 'gs://b', 'service-account': { key: 'nope' } }, {})).toThrow(
      /not valid JSON/,
    );
    expect(
      storageOptions({ 'storage-url': 'gs://b', 'application-credentials': { path: '/k.json' } }, {}),
    ).toMatchObject({
      keyFilename: '/k.json',
    });
    expect(
      storageOptions(
        {
          'storage-url': 'gs://b',
          'service-account': {
            key: JSON.stringify({
              project_id: 'p',
              type: 'service_account',
              client_email: 'r@p.iam.gserviceaccount.com',
              private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
            }),
          },
        },
        {},
      ),
    ).toMatchObject({ credentials: { client_email: 'r@p.iam.gserviceaccount.com' }, projectId: 'p' });
    expect(
      storageOptions({ 'storage-url': 'gs://b' }, { STORAGE_EMULATOR_HOST: '127.0.0.1:9' }),
    ).toMatchObject({
      apiEndpoint: 'http://127.0.0.1:9',
    });
  });

  it('transient 503s are retried; with retries: 0 the run reports the failure', async () => {
    for (let i = 0; i < 20; i++) await env.put(`o${i}.json`, `{"n":${i}}\n`);
    env.emulator.setFaults({ errorRate: 0.2, errorStatus: 503, seed: 7 });
    try {
      const ok = await env.run({ retry: { timeout: '5s', retries: 8 } });
      expect(ok.events).toHaveLength(20);
      await expect(
        (async () => {
          const bad = await env.run({ retry: { timeout: '5s', retries: 0 } });
          if (bad.events.length < 20) throw new Error('lost');
        })(),
      ).rejects.toThrow();
    } finally {
      env.emulator.setFaults({});
    }
  });

  it('retry.timeout bounds a stalled request', async () => {
    await env.put('a.json', '{"n":1}\n');
    env.emulator.setFaults({ latencyMs: 400 });
    try {
      await expect(env.run({ retry: { timeout: '100ms', retries: 1 } })).rejects.toThrow(
        /no answer within 100 ms/,
      );
    } finally {
      env.emulator.setFaults({});
    }
  });
});
