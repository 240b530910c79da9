/**
 * The minimal reader that bench/gcs-cores.ts compares `sluice job run` with: what the
 * `gcs` input's essential work costs without the rest of Sluice. It reads every gzip
 * NDJSON object under a prefix, on two threads (worker.ts: inflate whole, check and copy
 * each line with the input's WebAssembly), and writes the lines to stdout in order.
 * Objects come from a directory, or from a bucket through `@google-cloud/storage` (the
 * client the input uses), two objects ahead per thread.
 *
 * @example
 *   node floor.mjs dir /data/bench/many        # from disk
 *   node floor.mjs gcs http://127.0.0.1:9477 bench many/
 */
import { readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

const THREADS = 2;
const [mode, where, bucketName, prefix] = process.argv.slice(2);

async function sources(): Promise<{ names: string[]; read: (name: string) => Promise<Buffer> }> {
  if (mode === 'dir') {
    const names = readdirSync(where!)
      .filter((name) => name.endsWith('.gz'))
      .sort();
    return { names, read: async (name) => readFileSync(join(where!, name)) };
  }
  const { Storage } = await import('@google-cloud/storage');
  const bucket = new Storage({ apiEndpoint: where, projectId: 'bench' }).bucket(bucketName!);
  const [files] = await bucket.getFiles({ prefix });
  return {
    names: files.map((file) => file.name).sort(),
    read: async (name) => {
      const parts: Buffer[] = [];
      for await (const chunk of bucket.file(name).createReadStream({ decompress: false, validation: false }))
        parts.push(chunk as Buffer);
      return Buffer.concat(parts);
    },
  };
}

const { names, read } = await sources();
const workers = Array.from(
  { length: THREADS },
  () => new Worker(new URL('./floor-worker.mjs', import.meta.url)),
);
const done = new Map<number, Buffer>();
let nextIn = 0;
let nextOut = 0;
const send = async (worker: Worker) => {
  if (nextIn >= names.length) return;
  const id = nextIn++;
  worker.postMessage({ id, gz: await read(names[id]!) });
};
await new Promise<void>((resolve, reject) => {
  if (names.length === 0) resolve();
  for (const worker of workers) {
    worker.on('error', reject);
    worker.on('message', ({ id, out }: { id: number; out: Uint8Array }) => {
      void send(worker).catch(reject);
      done.set(id, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      for (let lines = done.get(nextOut); lines; lines = done.get(nextOut)) {
        done.delete(nextOut++);
        for (let at = 0; at < lines.length; ) {
          try {
            at += writeSync(1, lines, at, lines.length - at);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
          }
        }
      }
      if (nextOut === names.length) resolve();
    });
    for (let ahead = 0; ahead < 2; ahead++) void send(worker).catch(reject);
  }
});
await Promise.all(workers.map((worker) => worker.terminate()));
