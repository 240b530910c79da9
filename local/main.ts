/**
 * `npm start`: the local Sluice stack in the foreground. Prints the emulator
 * variables, then `sluice ready: <url>`; Ctrl-C (or SIGTERM) stops everything it started.
 *
 *   npm start                      # https://127.0.0.1:8443
 *   SLUICE_HTTP=1 SLUICE_PORT=8080 npm start
 *   npm start -- --gcs-dir ./buckets
 */
import { parseArgs } from 'node:util';
import { startStack } from './stack.ts';
import { wakePort } from './wake-endpoint.ts';

const { values } = parseArgs({
  options: {
    'gcs-dir': { type: 'string' },
    'data-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(`Usage: npm start [-- --gcs-dir DIR] [--data-dir DIR]

Starts the local Sluice control plane on real emulators.
  --gcs-dir DIR   serve each subfolder of DIR as a Cloud Storage bucket (default .sluice/gcs)
  --data-dir DIR  keep state here (default .sluice)
Environment: SLUICE_PORT (8443), SLUICE_HTTP=1 (plain HTTP), SLUICE_WAKE_PORT (8444: where
object notifications wake trigger-less jobs on the cloud worker; 0 picks a free port),
SLUICE_ADMIN_PASSWORD (first start only).`);
  process.exit(0);
}

const started = performance.now();
let wakeAt: number;
try {
  wakeAt = wakePort(process.env);
} catch (err) {
  console.error(`sluice: ${(err as Error).message}`);
  process.exit(2);
}
const stack = await startStack({
  dataDir: values['data-dir'] ?? '.sluice',
  port: Number(process.env.SLUICE_PORT ?? 8443),
  http: process.env.SLUICE_HTTP === '1',
  wakePort: wakeAt,
  ...(values['gcs-dir'] ? { gcsDir: values['gcs-dir'] } : {}),
}).catch((err: Error) => {
  console.error(`sluice: could not start the local stack: ${err.message}`);
  process.exit(1);
});

for (const [name, value] of Object.entries(stack.emulatorEnv)) console.log(`${name}=${value}`);
if (stack.tlsFingerprint) {
  console.log(`TLS certificate: ${stack.certPath} (SHA-256 ${stack.tlsFingerprint})`);
}
for (const notice of stack.notices) console.log(notice);
console.log(`started in ${Math.round(performance.now() - started)} ms`);
console.log(`notification wakes (sluice gcs notify --wake): ${stack.wakeUrl}`);
console.log(`sluice ready: ${stack.url}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('sluice: stopping...');
    stack.stop().then(
      () => process.exit(0),
      (err: Error) => {
        console.error(`sluice: error while stopping: ${err.message}`);
        process.exit(1);
      },
    );
  });
}
