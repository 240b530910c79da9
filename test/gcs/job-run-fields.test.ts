/**
 * Every field of the `gcs` input through `sluice job run`: real job files, a real
 * `bin/sluice.js` process against the project's Cloud Storage emulator, and assertions on
 * what a user sees: events on stdout (one JSON per line) and run reports on stderr
 * (`job-run-ended` counts, `job-errors` with object and reason), plus the state dir.
 * Field-by-field unit coverage is in gcs-input.test.ts; this file is the end-to-end check.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { writeParquet } from './parquet-fixture.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-gcs-fields-'));
let gcs: StorageEmulator;

beforeAll(async () => {
  gcs = await startStorageEmulator({ port: 0 });
});
afterAll(async () => {
  await gcs.stop();
});

type Json = Record<string, unknown>;
type Content = string | Buffer | { data: string | Buffer; contentType?: string };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout, one parsed event per line. */
  events: Json[];
  /** stderr report lines (`type {json}`), parsed. */
  reports: { type: string; payload: Json }[];
  /** Payloads of `job-run-ended`, one per run of the input. */
  ended: Json[];
  /** Payloads of `job-errors`. */
  errors: Json[];
}

interface RunOptions {
  context?: Record<string, string>;
  /** Defaults to a fresh directory. */
  stateDir?: string;
  emulator?: StorageEmulator;
  /** For triggered jobs: SIGINT once this holds (checked on output and every 50 ms). */
  stopWhen?: (run: Run) => boolean;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

/** A fresh bucket holding `objects`; returns its name. */
async function bucketWith(
  objects: Record<string, Content>,
  emulator: StorageEmulator = gcs,
): Promise<string> {
  const storage = new Storage({ apiEndpoint: emulator.url, projectId: 'demo-fields' });
  const name = unique('fields');
  await storage.createBucket(name);
  for (const [object, content] of Object.entries(objects)) {
    const { data, contentType } =
      typeof content === 'string' || Buffer.isBuffer(content) ? { data: content } : content;
    await storage
      .bucket(name)
      .file(object)
      .save(data, { resumable: false, ...(contentType ? { metadata: { contentType } } : {}) });
  }
  return name;
}

async function metadataOf(bucket: string, object: string): Promise<Json> {
  const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-fields' });
  const [meta] = await storage.bucket(bucket).file(object).getMetadata();
  return meta as Json;
}

/**
 * Writes a job file named `name` whose gcs input has `fields` (YAML as under `gcs:`, any
 * indentation); with `bucket`, `bucket-name` and `credentials.storage-url` come first.
 */
function jobFile(name: string, fields: string, bucket?: string): string {
  const head = bucket ? `bucket-name: ${bucket}\ncredentials:\n  storage-url: gs://${bucket}\n` : '';
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}\ninput:\n  gcs:\n${indent(head + indent(fields, 0), 4)}\noutput:\n  print: {}\n`,
  );
  return file;
}

function indent(text: string, by: number): string {
  const lines = text.replace(/^\n+|\s+$/g, '').split('\n');
  const margin = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => `${' '.repeat(by)}${l.slice(margin)}`).join('\n');
}

/** Processes at once: each start-up costs about a second of CPU, and there are two cores. */
const MAX_PROCESSES = 3;
let processes = 0;
const waiting: (() => void)[] = [];
async function processSlot(): Promise<() => void> {
  if (processes < MAX_PROCESSES) processes++;
  else await new Promise<void>((resolve) => waiting.push(resolve)); // handed over by release
  return () => {
    const next = waiting.shift();
    if (next) next();
    else processes--;
  };
}

/** `sluice job run FILE` against the emulator. */
async function sluice(file: string, options: RunOptions = {}): Promise<Run> {
  const release = await processSlot();
  try {
    return await spawnSluice(file, options);
  } finally {
    release();
  }
}

function spawnSluice(file: string, options: RunOptions): Promise<Run> {
  const stateDir = options.stateDir ?? mkdtempSync(join(dir, 'state-'));
  const args = [join(root, 'bin/sluice.js'), 'job', 'run', file, '--state-dir', stateDir];
  for (const [key, value] of Object.entries(options.context ?? {})) args.push('--context', `${key}=${value}`);
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, STORAGE_EMULATOR_HOST: (options.emulator ?? gcs).url },
  });
  let stdout = '';
  let stderr = '';
  let stopped = false;
  const check = () => {
    if (!options.stopWhen || stopped || !options.stopWhen(parse(null, stdout, stderr))) return;
    stopped = true;
    child.kill('SIGINT');
  };
  const poll = setInterval(check, 50);
  child.stdout.on('data', (d) => {
    stdout += d;
    check();
  });
  child.stderr.on('data', (d) => {
    stderr += d;
    check();
  });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearInterval(poll);
      resolve(parse(code, stdout, stderr));
    });
  });
}

/** Complete lines only: a process that is still running may be half-way through one. */
const completeLines = (text: string) => text.split('\n').slice(0, -1);

function parse(code: number | null, stdout: string, stderr: string): Run {
  const events = completeLines(stdout).map((l) => JSON.parse(l) as Json);
  const reports = completeLines(stderr)
    .map((l) => /^([a-z-]+) (\{.*\})$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ type: m[1]!, payload: JSON.parse(m[2]!) as Json }));
  const of = (type: string) => reports.filter((r) => r.type === type).map((r) => r.payload);
  return { code, stdout, stderr, events, reports, ended: of('job-run-ended'), errors: of('job-errors') };
}

/** The job's high-watermarks (and kept random offset) in a state dir. */
function watermarks(stateDir: string, job: string): Record<string, string> {
  const file = join(stateDir, `${job}.watermarks.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
}

/** Events grouped by the object they came from (downloads run in parallel: order is per object). */
function byObject(events: Json[], field = 'object'): Record<string, Json[]> {
  const out: Record<string, Json[]> = {};
  for (const { [field]: object, ...rest } of events) {
    out[String(object)] ??= [];
    out[String(object)]!.push(rest);
  }
  return out;
}

/** Per test: only a guard against a hang (the machine is shared, start-ups queue up). */
const TIMEOUT = 120_000;
const lines = '{"n":1}\n{"n":2}\n';
const day = (d: Date) => d.toISOString().slice(0, 10).replaceAll('-', '/');
const HOUR = 3_600_000;
/** The time in names like `t/2026-03-01T12:00:00.json` (the window tests' objects). */
const T_NAME_TIME = '^t/(?P<Y>\\d{4})-(?P<m>\\d{2})-(?P<d>\\d{2})T(?P<H>\\d{2}):(?P<M>\\d{2}):(?P<S>\\d{2})';

describe.concurrent('sluice job run: which objects are read (gcs)', { timeout: TIMEOUT }, () => {
  it('list-and-download-objects: names and prefixes, include/exclude on the full name, auto payload, context-interpolated credentials', async () => {
    const bucket = await bucketWith({
      'logs/a.json': '{"object":"from data","n":1}\nplain text\n[{"n":2},{"n":3}]\n',
      'logs/pretty.json': JSON.stringify([{ n: 4 }, { n: 5 }], null, 2),
      'logs/b.json': '{"n":6}\n',
      'logs/c.tmp': '{"n":7}\n',
      'other/c.json': '{"n":8}\n',
      'other/d.json': '{"n":9}\n',
      'logsx/e.json': '{"n":10}\n',
    });
    // bucket-name, storage-url and a service-account key from `--context` (the job's own
    // context block is the lowest precedence). Against the emulator the key is accepted
    // and not used: with STORAGE_EMULATOR_HOST the client sends no credentials.
    const file = jobFile(
      unique('select'),
      `
      bucket-name: '{{bucket}}'
      credentials:
        storage-url: 'gs://{{bucket}}'
        service-account:
          key: '{{sa-key}}'
      mode: list-and-download-objects
      object-names: [logs/, other/c.json]
      include-regex: ['\\.(json|txt)$']
      exclude-regex: ['^logs/b']
      object-name-field: object
      `,
    );
    writeFileSync(file, `context:\n  bucket: no-such-bucket\n${readFileSync(file, 'utf8')}`);
    const key = JSON.stringify({
      type: 'service_account',
      project_id: 'demo-fields',
      client_email: 'reader@demo-fields.iam.gserviceaccount.com',
      private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
    });
    // A JSON string on the command line (a bare object would be a context object, not a string).
    const r = await sluice(file, { context: { bucket, 'sa-key': JSON.stringify(key) } });
    expect(r.errors).toEqual([]);
    expect(r.code).toBe(0);
    // Metadata fields win over the data's own `object`; a line that is not JSON goes to
    // `_raw`; a one-line array and a pretty-printed array give one event per element.
    expect(byObject(r.events)).toEqual({
      'logs/a.json': [{ n: 1 }, { _raw: 'plain text' }, { n: 2 }, { n: 3 }],
      'logs/pretty.json': [{ n: 4 }, { n: 5 }],
      'other/c.json': [{ n: 8 }],
    });
    expect(r.ended).toHaveLength(1);
    expect(r.ended[0]).toMatchObject({
      listed: 5,
      skipped: { 'not-included': 1, excluded: 1 },
      downloaded: 3,
      events: 7,
      errors: 0,
    });
  });

  it('list-objects: every object of the bucket (empty object-names), one event each with its metadata and every *-field, nothing downloaded', async () => {
    const bucket = await bucketWith({
      'a.json': { data: lines, contentType: 'application/json' },
      'dir/b.txt': { data: 'text\n', contentType: 'text/plain' },
    });
    // An application-credentials file by path (not read against the emulator, see above).
    const adc = join(dir, 'application-credentials.json');
    writeFileSync(
      adc,
      JSON.stringify({ type: 'authorized_user', client_id: 'x', client_secret: 'y', refresh_token: 'z' }),
    );
    const file = jobFile(
      unique('listing'),
      `
      bucket-name: ${bucket}
      credentials:
        storage-url: gs://${bucket}
        application-credentials:
          path: ${adc}
      mode: list-objects
      object-names: []
      object-name-field: object
      creation-time-field: created
      last-modified-field: modified
      content-length-field: length
      content-type-field: type
      etag-field: etag
      `,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    const expected = async (name: string) => {
      const m = await metadataOf(bucket, name);
      return {
        bucket,
        name,
        generation: String(m.generation),
        size: Number(m.size),
        content_type: m.contentType,
        time_created: m.timeCreated,
        updated: m.updated,
        etag: m.etag,
        object: name,
        created: m.timeCreated,
        modified: m.updated,
        length: Number(m.size),
        type: m.contentType,
      };
    };
    expect(r.events).toEqual([await expected('a.json'), await expected('dir/b.txt')]);
    expect(r.events[0]).toMatchObject({ size: 16, content_type: 'application/json' });
    expect(r.ended[0]).toMatchObject({ listed: 2, downloaded: 0, download_requests: 0, events: 2 });
  });

  it('download-objects: fetches exactly the named objects (no listing); a missing one is a job-errors report; json payload', async () => {
    const bucket = await bucketWith({
      'good.json': '{"n":1}\nnot json\n[{"n":2},{"n":3}]\n',
      'pretty.json': JSON.stringify([{ n: 4 }, { n: 5, s: 'a,]}' }, 6], null, 2),
      'not-named.json': '{"n":7}\n',
    });
    const file = jobFile(
      unique('named'),
      `
      mode: download-objects
      object-names: [good.json, pretty.json, missing.json]
      payload-mode: json
      object-name-field: object
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    // json: a line that does not parse is reported and skipped; arrays (one line or
    // pretty-printed) give one event per element, a non-object element goes to _raw.
    expect(byObject(r.events)).toEqual({
      'good.json': [{ n: 1 }, { n: 2 }, { n: 3 }],
      'pretty.json': [{ n: 4 }, { n: 5, s: 'a,]}' }, { _raw: 6 }],
    });
    expect(r.errors).toHaveLength(2);
    expect(r.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          object: 'missing.json',
          reason: expect.stringMatching(/404|no such object/i),
        }),
        expect.objectContaining({ object: 'good.json', reason: 'invalid-json', sample: 'not json' }),
      ]),
    );
    expect(r.ended[0]).toMatchObject({ list_requests: 0, downloaded: 2, events: 6, errors: 2 });
  });

  it('timestamp-mode object-name-pattern (Y/m/d) with maximum-age: old objects and undated names are skipped', async () => {
    const bucket = await bucketWith({
      [`logs/${day(new Date())}/new.json`]: '{"n":1}\n',
      [`logs/${day(new Date(Date.now() - 10 * 24 * HOUR))}/old.json`]: '{"n":2}\n',
      'logs/undated.json': '{"n":3}\n',
    });
    const file = jobFile(
      unique('by-day'),
      `
      object-names: [logs/]
      timestamp-mode:
        object-name-pattern: '^logs/(?P<Y>\\d{4})/(?P<m>\\d{2})/(?P<d>\\d{2})/'
      maximum-age:
        value: 2d
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    expect(r.events).toEqual([{ n: 1 }]);
    // The anchored pattern turns maximum-age into a listing range: the old day is not even
    // listed; the undated name sorts inside the range and is skipped.
    expect(r.ended[0]).toMatchObject({ listed: 2, downloaded: 1, skipped: { 'no-timestamp': 1 } });
  });

  it('timestamp-mode last-modified with maximum-age: objects older than the age are skipped as too-old', async () => {
    const bucket = await bucketWith({ 'a.json': lines, 'b.json': lines });
    // Both objects were stored before the process started: older than 1 ms.
    const file = jobFile(
      unique('modified'),
      `
      object-names: []
      timestamp-mode: last-modified
      maximum-age:
        value: 1ms
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.ended[0]).toMatchObject({ listed: 2, downloaded: 0, skipped: { 'too-old': 2 } });
  });
});

describe('sluice job run: a large unrestricted listing (gcs)', { timeout: TIMEOUT }, () => {
  it('object-names: [] over 10,000 objects warns once with large-listing, and lists them all', async () => {
    // Written to disk for a folder-backed emulator: 10,000 uploads would take a while.
    const folder = mkdtempSync(join(dir, 'many-'));
    const bucket = 'many';
    mkdirSync(join(folder, bucket, 'o'), { recursive: true });
    for (let i = 0; i < 10_050; i++) writeFileSync(join(folder, bucket, 'o', `${i}.json`), '{}\n');
    const emulator = await startStorageEmulator({ port: 0, dir: folder });
    try {
      const file = jobFile(unique('many'), 'mode: list-objects\nobject-names: []', bucket);
      const r = await sluice(file, { emulator });
      expect(r.code).toBe(0);
      expect(r.events).toHaveLength(10_050);
      const warnings = r.errors.filter((e) => e.reason === 'large-listing');
      expect(warnings).toEqual([
        expect.objectContaining({
          level: 'warning',
          bucket,
          message: expect.stringMatching(/object-names is empty/),
        }),
      ]);
      expect(r.ended).toEqual([expect.objectContaining({ listed: 10_050, list_requests: 11 })]);
    } finally {
      await emulator.stop();
    }
  });
});

describe.concurrent('sluice job run: payloads, fields and preprocessors (gcs)', { timeout: TIMEOUT }, () => {
  it('every *-field and data-field on downloaded data; ignore-linebreaks makes each object one event', async () => {
    const pretty = '{\n  "n": 1,\n  "m": [1, 2]\n}\n';
    const bucket = await bucketWith({
      'a.json': { data: pretty, contentType: 'application/json' },
      'b.txt': { data: 'line one\nline two\n', contentType: 'text/plain' },
    });
    const file = jobFile(
      unique('fields'),
      `
      object-names: []
      ignore-linebreaks: true
      object-name-field: object
      creation-time-field: created
      last-modified-field: modified
      content-length-field: length
      content-type-field: type
      etag-field: etag
      data-field: data
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    const fields = async (name: string) => {
      const m = await metadataOf(bucket, name);
      return {
        object: name,
        created: m.timeCreated,
        modified: m.updated,
        length: Number(m.size),
        type: m.contentType,
        etag: m.etag,
      };
    };
    expect(r.events).toEqual(
      expect.arrayContaining([
        { data: { n: 1, m: [1, 2] }, ...(await fields('a.json')) },
        { data: 'line one\nline two\n', ...(await fields('b.txt')) },
      ]),
    );
    expect(r.events).toHaveLength(2);
    expect(r.events.find((e) => e.object === 'a.json')).toMatchObject({
      length: Buffer.byteLength(pretty),
      type: 'application/json',
    });
  });

  it('sluice job run prints objects in listing order by default, each one whole, although they are read at once', async () => {
    // A large first object and small ones after it: read side by side, the small ones are
    // done long before the first, so only ordering keeps them after it.
    const big = Array.from({ length: 60_000 }, (_, n) => `{"n":${n}}`).join('\n');
    const bucket = await bucketWith({
      'a.json.gz': gzipSync(`${big}\n`),
      'b.json': '{"n":"b1"}\n{"n":"b2"}\n',
      'c.json': '{"n":"c1"}\n',
      'd.json': '{"n":"d1"}\n',
    });
    const r = await sluice(
      jobFile(
        unique('ordered'),
        'object-names: []\npreprocessors: [extension]\nobject-name-field: object',
        bucket,
      ),
    );
    expect(r.code).toBe(0);
    const objects = r.events.map((e) => e.object);
    const firstOf = (name: string) => objects.indexOf(name);
    expect([firstOf('a.json.gz'), firstOf('b.json'), firstOf('c.json'), firstOf('d.json')]).toEqual([
      0, 60_000, 60_002, 60_003,
    ]);
    expect(r.events.slice(60_000).map((e) => e.n)).toEqual(['b1', 'b2', 'c1', 'd1']);
    expect(r.events.slice(0, 60_000).every((e, n) => e.n === n)).toBe(true);
  });

  it('preprocessors: extension picks gzip for .gz, parquet for .parquet and .parquet.gz, nothing otherwise', async () => {
    const parquet = await writeParquet(
      "SELECT i AS id, 'x' || i AS label, i::BIGINT * 1000000000000 AS big FROM range(5) t(i)",
      2,
    );
    const bucket = await bucketWith({
      'a.json.gz': gzipSync(lines),
      'b.parquet': parquet,
      'c.parquet.gz': gzipSync(parquet),
      'd.json': lines,
    });
    const file = jobFile(
      unique('extension'),
      `
      object-names: []
      preprocessors: [extension]
      object-name-field: object
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    const rows = [0, 1, 2, 3, 4].map((i) => ({ id: i, label: `x${i}`, big: i * 1_000_000_000_000 }));
    expect(byObject(r.events)).toEqual({
      'a.json.gz': [{ n: 1 }, { n: 2 }],
      'b.parquet': rows,
      'c.parquet.gz': rows,
      'd.json': [{ n: 1 }, { n: 2 }],
    });
  });

  it('preprocessors gzip then parquet, whatever the names', async () => {
    const parquet = await writeParquet("SELECT i AS id, 'r' || i AS label FROM range(3) t(i)");
    const bucket = await bucketWith({ 'rows.bin': gzipSync(parquet), 'plain.dat': parquet });
    const file = jobFile(
      unique('parquet'),
      `
      object-names: []
      preprocessors: [gzip, parquet]
      object-name-field: object
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    const rows = [0, 1, 2].map((i) => ({ id: i, label: `r${i}` }));
    expect(byObject(r.events)).toEqual({ 'rows.bin': rows, 'plain.dat': rows });
  });

  it('payload-mode raw keeps lines as text; gzip decompresses gzip data and passes the rest through', async () => {
    const bucket = await bucketWith({ 'a.log.gz': gzipSync('{"n":1}\r\nsecond\n'), 'b.log': '{"n":2}\n' });
    const file = jobFile(
      unique('raw'),
      `
      object-names: []
      payload-mode: raw
      preprocessors: [gzip]
      object-name-field: object
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    expect(byObject(r.events)).toEqual({
      'a.log.gz': [{ _raw: '{"n":1}' }, { _raw: 'second' }],
      'b.log': [{ _raw: '{"n":2}' }],
    });
  });

  it('payload-mode binary: the whole object is one base64 event; preprocessors run in the listed order (base64, then gzip)', async () => {
    const compressed = gzipSync('abc\n');
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    const bucket = await bucketWith({ 'x.gz': compressed, 'y.bin': bytes });
    const file = jobFile(
      unique('binary'),
      `
      object-names: []
      payload-mode: binary
      preprocessors: [base64, gzip]
      object-name-field: object
      `,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(0);
    // gzip came second: it saw base64 text, not gzip data, and left it alone.
    expect(byObject(r.events)).toEqual({
      'x.gz': [{ _raw: compressed.toString('base64') }],
      'y.bin': [{ _raw: bytes.toString('base64') }],
    });
  });
});

describe.concurrent('sluice job run: fingerprints (gcs)', { timeout: TIMEOUT }, () => {
  it('a second run prints nothing but the overwritten object; fingerprints last maximum-fingerprint-age', async () => {
    const bucket = await bucketWith({ 'a.json': lines, 'b.json': '{"n":3}\n' });
    const state = mkdtempSync(join(dir, 'state-'));
    const name = unique('fingerprints');
    const file = jobFile(
      name,
      `
      object-names: []
      fingerprinting: true
      maximum-fingerprint-age: 30d
      `,
      bucket,
    );
    const first = await sluice(file, { stateDir: state });
    expect(first.code).toBe(0);
    expect(first.events).toHaveLength(3);
    expect(first.ended[0]).toMatchObject({ downloaded: 2, fingerprinted: 2 });
    const kept = JSON.parse(readFileSync(join(state, `${name}.fingerprints.json`), 'utf8')) as Record<
      string,
      number
    >;
    expect(Object.keys(kept)).toHaveLength(2);
    for (const expires of Object.values(kept)) expect(expires).toBeGreaterThan(Date.now() + 29 * 24 * HOUR);

    const storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-fields' });
    await storage.bucket(bucket).file('b.json').save('{"n":4}\n', { resumable: false });
    const second = await sluice(file, { stateDir: state });
    expect(second.code).toBe(0);
    expect(second.events).toEqual([{ n: 4 }]);
    expect(second.ended[0]).toMatchObject({ downloaded: 1, skipped: { fingerprinted: 1 } });
  });

  it('with a tiny maximum-fingerprint-age the next run reads the objects again', async () => {
    const bucket = await bucketWith({ 'a.json': lines });
    const file = jobFile(
      unique('short-fingerprints'),
      `
      object-names: []
      fingerprinting: true
      maximum-fingerprint-age: 1ms
      trigger:
        interval:
          duration: 200ms
      `,
      bucket,
    );
    const r = await sluice(file, { stopWhen: (run) => run.ended.length >= 2 });
    expect(r.ended.slice(0, 2)).toEqual([
      expect.objectContaining({ downloaded: 1, events: 2, fingerprinted: 1 }),
      expect.objectContaining({ downloaded: 1, events: 2, fingerprinted: 1, skipped: {} }),
    ]);
    expect(r.events.slice(0, 4)).toEqual([{ n: 1 }, { n: 2 }, { n: 1 }, { n: 2 }]);
  });
});

describe.concurrent('sluice job run: retry (gcs, fault injection)', { timeout: TIMEOUT }, () => {
  async function faulty(objects: Record<string, Content>) {
    const emulator = await startStorageEmulator({ port: 0 });
    const bucket = await bucketWith(objects, emulator);
    return { emulator, bucket };
  }

  it('every request answers 503 and retries is 0: the run fails with a job-errors report after one request', async () => {
    const { emulator, bucket } = await faulty({ 'a.json': lines });
    try {
      emulator.setFaults({ errorRate: 1, errorStatus: 503 });
      emulator.resetStats();
      const file = jobFile(
        unique('no-retries'),
        `object-names: []\nretry:\n  timeout: 5s\n  retries: 0`,
        bucket,
      );
      const r = await sluice(file, { emulator });
      expect(r.code).toBe(1);
      // The emulator's 503 answer says `injected fault`: reported once, with its status.
      expect(r.errors).toEqual([
        { input: 'gcs', bucket, reason: '503: injected fault', status: 503, transient: true },
      ]);
      // The run still ends with its counts, marked failed.
      expect(r.ended).toEqual([expect.objectContaining({ failed: true, list_requests: 1, downloaded: 0 })]);
      expect(r.stderr).toMatch(/^error: job no-retries-\d+ failed: injected fault$/m);
      expect(r.stdout).toBe('');
      expect(emulator.stats()).toMatchObject({ list: 1, download: 0 });
    } finally {
      await emulator.stop();
    }
  });

  it('a bucket that does not exist: one job-errors report with the 404, a failed end, exit 4 (not found)', async () => {
    const file = jobFile(unique('no-bucket'), 'object-names: []', `missing-${Date.now()}`);
    const r = await sluice(file);
    expect(r.code).toBe(4);
    expect(r.errors).toEqual([expect.objectContaining({ status: 404, transient: false })]);
    expect(r.ended).toEqual([expect.objectContaining({ failed: true, listed: 0 })]);
  });

  it('20% of requests answer 503 and retries is 5: every object is read', async () => {
    const objects = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`o${i}.json`, `{"n":${i}}\n`]));
    const { emulator, bucket } = await faulty(objects);
    try {
      // Seed 33 fails a few of the first requests but never one request six times in a row.
      emulator.setFaults({ errorRate: 0.2, errorStatus: 503, seed: 33 });
      emulator.resetStats();
      const file = jobFile(
        unique('retries'),
        `object-names: []\nretry:\n  timeout: 5s\n  retries: 5`,
        bucket,
      );
      const r = await sluice(file, { emulator });
      expect(r.code).toBe(0);
      expect(r.errors).toEqual([]);
      expect(r.events.map((e) => e.n).sort((a, b) => Number(a) - Number(b))).toEqual(
        Array.from({ length: 20 }, (_, i) => i),
      );
      expect(r.ended[0]).toMatchObject({ downloaded: 20, events: 20, errors: 0, failed_objects: 0 });
      expect(emulator.stats().injectedErrors).toBeGreaterThan(0);
    } finally {
      await emulator.stop();
    }
  });

  it('retry.timeout bounds each request; a timeout is retried `retries` times, then reported', async () => {
    const { emulator, bucket } = await faulty({ 'a.json': lines });
    try {
      emulator.setFaults({ latencyMs: 400 });
      emulator.resetStats();
      const file = jobFile(
        unique('timeout'),
        `object-names: []\nretry:\n  timeout: 100ms\n  retries: 2`,
        bucket,
      );
      const r = await sluice(file, { emulator });
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([expect.objectContaining({ reason: 'no answer within 100 ms' })]);
      // The last attempt may still be on its way into the emulator when the process ends.
      await vi.waitFor(() => expect(emulator.stats().list).toBe(3));
    } finally {
      await emulator.stop();
    }
  });
});

describe.concurrent('sluice job run: triggers (gcs)', { timeout: TIMEOUT }, () => {
  it('interval with a window from start-time: catches up window by window, keeps its high-watermark and random offset across restarts', async () => {
    // Windows of 1 h from 3.5 h ago: three complete ones, the fourth still open.
    const start = Math.floor((Date.now() - 3.5 * HOUR) / 1000) * 1000;
    const at = (ms: number) => `t/${new Date(start + ms).toISOString().slice(0, 19)}.json`;
    const bucket = await bucketWith({
      [at(-10 * 60_000)]: '{"w":0}\n', // before start-time
      [at(10 * 60_000)]: '{"w":1}\n',
      [at(HOUR + 20 * 60_000)]: '{"w":2}\n',
      [at(2 * HOUR + 30 * 60_000)]: '{"w":3}\n',
      [at(3 * HOUR + 10 * 60_000)]: '{"w":4}\n', // in the open window
    });
    const startTime = `${new Date(start).toISOString().slice(0, 19).replace('T', ' ')}.000 +0000`;
    const name = unique('hourly');
    const file = jobFile(
      name,
      `
      object-names: [t/]
      timestamp-mode:
        object-name-pattern: '${T_NAME_TIME}'
      trigger:
        interval:
          duration: 1h
          random-offset: 300ms
          window:
            size: 1h
            offset: '{{lag}}'
            start:
              start-time:
                start-time: '${startTime}'
                highwatermark-file: hourly.hwm
      `,
      bucket,
    );
    const state = mkdtempSync(join(dir, 'state-'));
    const mark = () => watermarks(state, name)['hourly.hwm'];
    const endOfWindow = (windows: number) => new Date(start + windows * HOUR).toISOString();

    // An offset of 1 h leaves two windows complete.
    const first = await sluice(file, {
      stateDir: state,
      context: { lag: '1h' },
      stopWhen: () => mark() === endOfWindow(2),
    });
    expect(first.code).toBe(0);
    expect(first.events).toEqual([{ w: 1 }, { w: 2 }]);
    expect(first.ended.map((e) => e.events)).toEqual([1, 1]);
    const offset = Number(watermarks(state, name)['random-offset-ms']);
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThan(300);

    // Restarted without the offset: resumes at the watermark, reads the third window only.
    const second = await sluice(file, {
      stateDir: state,
      context: { lag: '0s' },
      stopWhen: () => mark() === endOfWindow(3),
    });
    expect(second.code).toBe(0);
    expect(second.events).toEqual([{ w: 3 }]);
    expect(second.ended).toHaveLength(1);
    expect(watermarks(state, name)).toEqual({
      'hourly.hwm': endOfWindow(3),
      'random-offset-ms': String(offset),
    });
  });

  it('interval with a window start tracked: the first window ends now, and a runner that fell behind catches up from the tracked position', async () => {
    const now = Date.now();
    const at = (ms: number) => `t/${new Date(now + ms).toISOString().slice(0, 19)}.json`;
    const bucket = await bucketWith({
      [at(-5 * HOUR)]: '{"w":0}\n', // before the position set below: never read
      [at(-3.5 * HOUR)]: '{"w":1}\n',
      [at(-2.5 * HOUR)]: '{"w":2}\n',
      [at(-30 * 60_000)]: '{"w":3}\n', // in the first window of a fresh start
    });
    const name = unique('tracked');
    const file = jobFile(
      name,
      `
      object-names: [t/]
      timestamp-mode:
        object-name-pattern: '${T_NAME_TIME}'
      trigger:
        interval:
          duration: 1h
          window:
            size: 1h
            start:
              tracked: position
      `,
      bucket,
    );
    const state = mkdtempSync(join(dir, 'state-'));
    const position = () => watermarks(state, name).position;

    // Nothing tracked yet: one window, the hour before now.
    const first = await sluice(file, { stateDir: state, stopWhen: () => position() !== undefined });
    expect(first.code).toBe(0);
    expect(first.events).toEqual([{ w: 3 }]);
    const end = Date.parse(position()!);
    expect(end).toBeGreaterThanOrEqual(now);
    expect(end).toBeLessThan(now + 60_000);

    // Four hours behind (as after an outage): the missed windows, one run each, in order.
    const behind = new Date(end - 4 * HOUR).toISOString();
    writeFileSync(join(state, `${name}.watermarks.json`), JSON.stringify({ position: behind }));
    const second = await sluice(file, {
      stateDir: state,
      stopWhen: () => position() === new Date(end).toISOString(),
    });
    expect(second.code).toBe(0);
    // w:3's window comes round again too (this job keeps no fingerprints); w:0 lies before.
    expect(second.events).toEqual([{ w: 1 }, { w: 2 }, { w: 3 }]);
    expect(second.ended).toHaveLength(4);
    expect(position()).toBe(new Date(end).toISOString());
  });

  it('cron with immediate: true runs at once although the next beat is weeks away, and only once', async () => {
    // A yearly beat about 60 days ahead: longer than a 32-bit timer, never near.
    const beat = new Date(Date.now() + 60 * 24 * HOUR);
    const cron = `0 12 ${Math.min(beat.getUTCDate(), 28)} ${beat.getUTCMonth() + 1} *`;
    const bucket = await bucketWith({ 'a.json': lines });
    const file = jobFile(
      unique('yearly'),
      `
      object-names: []
      timestamp-mode: last-modified
      maximum-age:
        value: 1h
      trigger:
        cron:
          cron: '${cron}'
          immediate: true
      `,
      bucket,
    );
    const r = await sluice(file, { stopWhen: (run) => run.ended.length >= 1 });
    expect(r.events).toEqual([{ n: 1 }, { n: 2 }]);
    expect(r.reports.filter((x) => x.type === 'job-run-started')).toHaveLength(1);
    expect(r.ended).toHaveLength(1);
    expect(r.stderr).not.toContain('TimeoutOverflowWarning');
    expect(r.code).toBe(0);
  });

  it('a message trigger is refused by sluice job run with a clear error', async () => {
    const bucket = await bucketWith({ 'a.json': lines });
    const file = jobFile(
      unique('on-message'),
      `object-names: []\ntrigger:\n  message:\n    filter-kind: user`,
      bucket,
    );
    const r = await sluice(file);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'message triggers run on a worker connected to a control plane (sluice worker run), not with sluice job run',
    );
  });
});
