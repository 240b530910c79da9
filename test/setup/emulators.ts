/**
 * Vitest global setup: one pair of Google emulators for the whole run (each test
 * file isolates itself with its own project id), stopped when the run ends. If the
 * environment already names emulators, they are reused.
 */
import { type GoogleEmulators, startGoogleEmulators } from '../../local/google-emulators.ts';

let emulators: GoogleEmulators | undefined;

export async function setup(): Promise<void> {
  // No metadata server next to the emulators: skip google-auth's probe (and its warning).
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  emulators = await startGoogleEmulators();
  process.env.FIRESTORE_EMULATOR_HOST = emulators.firestoreHost;
  process.env.PUBSUB_EMULATOR_HOST = emulators.pubsubHost;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void emulators?.stop().finally(() => process.exit(130));
    });
  }
}

export async function teardown(): Promise<void> {
  await emulators?.stop();
}
