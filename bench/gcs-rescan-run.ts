/**
 * One run of a `gcs` job with Firestore fingerprints, in a process of its own, as a
 * worker would do it: fresh Storage and Firestore clients (cold connections, nothing
 * cached), the job through `runJob`, `print` to standard output. `runS` starts once
 * the SDKs' code is loaded (`sdkLoadS`), as in a worker that is up. `bench/gcs.ts` starts
 * it for the re-scan figure and reads the last line of standard error:
 * `{"runS":…,"cpuS":…,"sdkLoadS":…,"reads":…,"events":…,"listRequests":…}`.
 *
 * Needs STORAGE_EMULATOR_HOST and FIRESTORE_EMULATOR_HOST; the job comes as JSON in
 * argv[2], the Firestore project and tenant in BENCH_PROJECT and BENCH_TENANT.
 *
 * @example
 *   tsx bench/gcs-rescan-run.ts '{"name":"bench","input":{"gcs":{…}},"output":{"print":{}}}' > /dev/null
 */
import { cloudClients } from '../functions/adapters/clients.ts';
import { firestoreFingerprints } from '../functions/runner/fingerprints/firestore.ts';
import { createPrintOutput } from '../functions/runner/outputs/print/index.ts';
import { runJob } from '../functions/runner/runner.ts';
import { validateJob } from '../shared/job/index.ts';

// Loading the SDKs' code is the process's start-up, which a worker pays once, not per
// run; it is reported apart (sdkLoadS). Clients and connections are still made cold below.
const loading = performance.now();
await Promise.all([import('@google-cloud/firestore'), import('@google-cloud/storage')]);
const sdkLoadS = (performance.now() - loading) / 1000;
const started = performance.now();
const cpuAtStart = process.cpuUsage();
const validated = validateJob(JSON.parse(process.argv[2]!), { level: 'rendered' });
if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
const clients = cloudClients({ projectId: process.env.BENCH_PROJECT ?? 'demo-bench' });
let reads = 0;
let events = 0;
let listRequests = 0;
const db = await clients.firestore();
const output = createPrintOutput(process.stdout);
await runJob(validated.job, {
  worker: 'bench',
  output: {
    write: async (batch) => {
      events += batch.length;
      await output.write(batch);
    },
    close: () => output.close(),
  },
  fingerprints: firestoreFingerprints(db, {
    tenant: process.env.BENCH_TENANT ?? 'bench',
    onRead: () => reads++,
  }),
  watermarks: { get: async () => undefined, set: async () => {} },
  signal: new AbortController().signal,
  report: (r) => {
    if (r.type === 'job-errors') console.error('job-errors', JSON.stringify(r.payload));
    if (r.type === 'job-run-ended') listRequests = Number(r.payload.list_requests ?? 0);
  },
});
const runS = (performance.now() - started) / 1000;
// CPU seconds of the run: on a shared machine the wall time also measures the neighbours.
const cpu = process.cpuUsage(cpuAtStart);
const cpuS = (cpu.user + cpu.system) / 1e6;
await clients.close();
console.error(JSON.stringify({ runS, cpuS, sdkLoadS, reads, events, listRequests }));
