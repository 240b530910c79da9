/**
 * The Google emulators a benchmark needs: those named by the environment, else started
 * here for the run (and set in the environment, so that clients made later find them).
 *
 * @example
 *   const stop = await pubsubEmulator();   // PUBSUB_EMULATOR_HOST is set
 *   ...; await stop();
 */
import { PUBSUB_EMULATOR_BIN, startGoogleEmulators } from '../local/google-emulators.ts';
import { freePort, spawnGuarded } from '../local/processes.ts';

/** Google's Pub/Sub emulator alone; returns how to stop what was started (nothing when reused). */
export async function pubsubEmulator(): Promise<() => Promise<void>> {
  if (process.env.PUBSUB_EMULATOR_HOST) return async () => {};
  const port = await freePort('127.0.0.1');
  const emulator = await spawnGuarded(
    'pubsub emulator',
    PUBSUB_EMULATOR_BIN,
    ['--host=127.0.0.1', `--port=${port}`],
    /Server started, listening on/,
  );
  process.env.PUBSUB_EMULATOR_HOST = `127.0.0.1:${port}`;
  return () => emulator.stop();
}

/** The Firestore and Pub/Sub emulators, stopped when the process exits. */
export async function googleEmulators(): Promise<void> {
  if (process.env.FIRESTORE_EMULATOR_HOST) return;
  const emulators = await startGoogleEmulators();
  process.env.FIRESTORE_EMULATOR_HOST = emulators.firestoreHost;
  process.env.PUBSUB_EMULATOR_HOST = emulators.pubsubHost;
  process.once('exit', () => void emulators.stop());
}
