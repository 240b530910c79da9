/**
 * The storage emulator works with a client we did not write: `gcloud storage` itself
 * (Google's Python client underneath) uploads small files in one multipart request (with
 * a single-quoted boundary and bare LF line ends) and large ones as resumable uploads under
 * /resumable/upload/..., lists, reads, moves (after asking the bucket's storage layout),
 * composes and removes, and the emulator's Pub/Sub notifications follow what it did. Each
 * result is checked through the official Node client too.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StorageEmulator, startStorageEmulator } from '../../local/storage-emulator/index.ts';
import { seededRandom, testSeed } from '../helpers/random.ts';

const GCLOUD = '/usr/bin/gcloud';
const dir = mkdtempSync(join(tmpdir(), 'sluice-gcloud-'));
let gcs: StorageEmulator;
let storage: Storage;

beforeAll(async () => {
  if (!existsSync(GCLOUD))
    throw new Error('these tests need gcloud: sudo apt-get install -y google-cloud-cli (.ci/run does)');
  mkdirSync(join(dir, 'buckets', 'tools'), { recursive: true });
  gcs = await startStorageEmulator({ port: 0, dir: join(dir, 'buckets') });
  storage = new Storage({ apiEndpoint: gcs.url, projectId: 'demo-gcloud' });
});
afterAll(async () => {
  await gcs.stop();
});

function gcloud(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      GCLOUD,
      ['storage', ...args],
      {
        env: {
          ...process.env,
          CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE: `${gcs.url}/`,
          CLOUDSDK_AUTH_DISABLE_CREDENTIALS: 'true',
          CLOUDSDK_CORE_PROJECT: 'demo-sluice',
          CLOUDSDK_CONFIG: join(dir, 'gcloud-config'),
          CLOUDSDK_CORE_DISABLE_PROMPTS: '1',
        },
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        err ? reject(new Error(`gcloud storage ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

const bucket = () => storage.bucket('tools');
const contents = async (name: string) => (await bucket().file(name).download())[0];

describe('gcloud storage against the storage emulator', () => {
  it('copies a small file up (multipart) and a large one (resumable), lists them, reads them and copies the large one back down', async () => {
    writeFileSync(join(dir, 'small.txt'), 'hello\n');
    const seed = testSeed();
    const random = seededRandom(seed);
    const large = Buffer.alloc(12 * 1024 * 1024);
    for (let i = 0; i < large.length; i++) large[i] = Math.floor(random() * 256);
    writeFileSync(join(dir, 'large.bin'), large);

    await gcloud('cp', join(dir, 'small.txt'), 'gs://tools/small.txt');
    await gcloud('cp', join(dir, 'large.bin'), 'gs://tools/large.bin');
    expect((await contents('small.txt')).toString()).toBe('hello\n');
    expect((await contents('large.bin')).equals(large), `seed ${seed}`).toBe(true);

    expect((await gcloud('ls', 'gs://tools')).split('\n').filter(Boolean)).toEqual([
      'gs://tools/large.bin',
      'gs://tools/small.txt',
    ]);
    expect(await gcloud('cat', 'gs://tools/small.txt')).toBe('hello\n');

    // Back down, through the emulator's disk reads in pieces (store.ts): gcloud checks the hash.
    await gcloud('cp', 'gs://tools/large.bin', join(dir, 'large.back'));
    expect(readFileSync(join(dir, 'large.back')).equals(large), `seed ${seed}`).toBe(true);
    const across = { start: (1 << 20) - 10, end: (1 << 20) + 10 };
    const [range] = await bucket().file('large.bin').download(across);
    expect(range.equals(large.subarray(across.start, across.end + 1)), `seed ${seed}`).toBe(true);
  }, 120_000);

  it('moves, composes and removes', async () => {
    await gcloud('mv', 'gs://tools/small.txt', 'gs://tools/moved.txt');
    expect((await bucket().file('small.txt').exists())[0]).toBe(false);
    expect((await contents('moved.txt')).toString()).toBe('hello\n');

    await bucket().file('second.txt').save('world\n', { resumable: false });
    await gcloud(
      'objects',
      'compose',
      'gs://tools/moved.txt',
      'gs://tools/second.txt',
      'gs://tools/both.txt',
    );
    expect((await contents('both.txt')).toString()).toBe('hello\nworld\n');

    await gcloud('rm', 'gs://tools/large.bin');
    const [files] = await bucket().getFiles();
    expect(files.map((f) => f.name).sort()).toEqual(['both.txt', 'moved.txt', 'second.txt']);
  }, 120_000);

  // gcloud sends `cacheControl: null` for --clear-cache-control. Its custom-metadata flags send
  // the whole map as gcloud computed it from a GET of a few fields only (`metadata: {}` for both
  // --clear-custom-metadata and --remove-custom-metadata=a), so they are not a test of the API.
  it('clears cache control with objects update', async () => {
    await bucket()
      .file('meta.txt')
      .save('m', { resumable: false, metadata: { cacheControl: 'no-cache', contentLanguage: 'en' } });
    await gcloud(
      'objects',
      'update',
      'gs://tools/meta.txt',
      '--clear-cache-control',
      '--content-language=fr',
    );
    const [meta] = await bucket().file('meta.txt').getMetadata();
    expect(meta.cacheControl).toBeUndefined();
    expect(meta.contentLanguage).toBe('fr');
    await bucket().file('meta.txt').delete();
  }, 120_000);

  it('sends the Pub/Sub notifications of what gcloud uploads, moves and removes, and lists the config', async () => {
    const pubsub = new PubSub({ projectId: 'demo-sluice' });
    const [topic] = await pubsub.createTopic(`gcloud-${testSeed()}`);
    const [subscription] = await topic.createSubscription(`gcloud-${testSeed()}-sub`);
    const [notification] = await bucket().createNotification(topic.name, { payloadFormat: 'JSON_API_V1' });
    expect(await gcloud('buckets', 'notifications', 'list', 'gs://tools')).toContain(
      `id: '${notification.id}'`,
    );

    writeFileSync(join(dir, 'note.txt'), 'note\n');
    await gcloud('cp', join(dir, 'note.txt'), 'gs://tools/note.txt');
    await gcloud('mv', 'gs://tools/note.txt', 'gs://tools/note-moved.txt');
    await gcloud('rm', 'gs://tools/note-moved.txt');

    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${seen.join(', ')}`)), 15_000);
      subscription.on('message', (message) => {
        message.ack();
        seen.push(`${message.attributes.eventType} ${message.attributes.objectId}`);
        if (seen.length === 4) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    expect(seen.sort()).toEqual([
      'OBJECT_DELETE note-moved.txt',
      'OBJECT_DELETE note.txt',
      'OBJECT_FINALIZE note-moved.txt',
      'OBJECT_FINALIZE note.txt',
    ]);
    await subscription.close();
    await notification.delete();
    await pubsub.close();
  }, 120_000);
});
