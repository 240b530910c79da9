/**
 * Google's Firestore and Pub/Sub emulators from the Debian packages
 * (`google-cloud-cli-firestore-emulator`, `google-cloud-cli-pubsub-emulator`),
 * started on free ports. Shared by the test suite's global setup and `npm start`.
 *
 * If `FIRESTORE_EMULATOR_HOST` and `PUBSUB_EMULATOR_HOST` are already set (for example
 * under `firebase emulators:exec`), those emulators are reused and nothing is started.
 *
 * @example
 *   const emulators = await startGoogleEmulators();
 *   process.env.FIRESTORE_EMULATOR_HOST = emulators.firestoreHost;
 *   await emulators.stop();
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, type GuardedProcess, spawnGuarded } from './processes.ts';

const SDK = process.env.SLUICE_GCLOUD_SDK ?? '/usr/lib/google-cloud-sdk';
export const FIRESTORE_EMULATOR_BIN = join(SDK, 'platform/cloud-firestore-emulator/cloud_firestore_emulator');
export const PUBSUB_EMULATOR_BIN = join(SDK, 'platform/pubsub-emulator/bin/cloud-pubsub-emulator');

/** How long one Firestore export may take before it is given up. */
const EXPORT_TIMEOUT_MS = 30_000;

export interface GoogleEmulators {
  firestoreHost: string;
  pubsubHost: string;
  /** True when we started the processes (and so must stop them). */
  owned: boolean;
  /** Writes a Firestore export that `persistDir` will be seeded from on the next start. */
  exportFirestore(projectId: string): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  host?: string;
  firestorePort?: number;
  pubsubPort?: number;
  /** Keep Firestore data here across restarts (export on `exportFirestore`, seed on start). */
  persistDir?: string;
  /** Reuse emulators named by the environment instead of starting new ones (default true). */
  reuseFromEnv?: boolean;
  /** Chooses a free port (default: one the system gives; tests choose a taken one). */
  pickPort?: (host: string) => Promise<number>;
}

/** Starts on freshly chosen ports before giving up, when a chosen port was taken meanwhile. */
const PORT_ATTEMPTS = 3;
/** What the emulators (Java) say when their port is taken. */
const PORT_TAKEN = /BindException|Address already in use|netBind/;

export async function startGoogleEmulators(options: StartOptions = {}): Promise<GoogleEmulators> {
  const envFirestore = process.env.FIRESTORE_EMULATOR_HOST;
  const envPubsub = process.env.PUBSUB_EMULATOR_HOST;
  if ((options.reuseFromEnv ?? true) && envFirestore && envPubsub) {
    return emulatorsAt(envFirestore, envPubsub, [], options.persistDir);
  }
  assertInstalled();
  const host = options.host ?? '127.0.0.1';
  const seed = options.persistDir
    ? ((await findExportMetadata(join(options.persistDir, 'firestore-export'))) ??
      (await findExportMetadata(join(options.persistDir, 'firestore-export.old'))))
    : undefined;
  const pickPort = options.pickPort ?? freePort;
  for (let attempt = 1; ; attempt++) {
    const [firestorePort, pubsubPort] = await Promise.all([
      options.firestorePort ?? pickPort(host),
      options.pubsubPort ?? pickPort(host),
    ]);
    try {
      return await startOn(host, firestorePort, pubsubPort, seed, options.persistDir);
    } catch (err) {
      // A port is free when chosen, and bound by the emulator a moment later: another
      // process (a test run or stack starting at the same time) can take it in between.
      const chosen = options.firestorePort === undefined || options.pubsubPort === undefined;
      if (!chosen || attempt === PORT_ATTEMPTS || !PORT_TAKEN.test(String(err))) throw err;
    }
  }
}

async function startOn(
  host: string,
  firestorePort: number,
  pubsubPort: number,
  seed: string | undefined,
  persistDir: string | undefined,
): Promise<GoogleEmulators> {
  const firestoreArgs = ['start', `--host=${host}`, `--port=${firestorePort}`];
  if (seed) firestoreArgs.push(`--seed_from_export=${seed}`);
  const started = await Promise.allSettled([
    spawnGuarded(
      'firestore emulator',
      FIRESTORE_EMULATOR_BIN,
      firestoreArgs,
      /Dev App Server is now running/,
    ),
    spawnGuarded(
      'pubsub emulator',
      PUBSUB_EMULATOR_BIN,
      [`--host=${host}`, `--port=${pubsubPort}`],
      /Server started, listening on/,
    ),
  ]);
  const processes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = started.find((r) => r.status === 'rejected');
  if (failure) {
    await Promise.all(processes.map((p) => p.stop()));
    throw (failure as PromiseRejectedResult).reason;
  }
  return emulatorsAt(`${host}:${firestorePort}`, `${host}:${pubsubPort}`, processes, persistDir);
}

function emulatorsAt(
  firestoreHost: string,
  pubsubHost: string,
  processes: GuardedProcess[],
  persistDir: string | undefined,
): GoogleEmulators {
  return {
    firestoreHost,
    pubsubHost,
    owned: processes.length > 0,
    async exportFirestore(projectId) {
      if (!persistDir) return;
      const finalDir = join(persistDir, 'firestore-export');
      const tmpDir = `${finalDir}.tmp`;
      await rm(tmpDir, { recursive: true, force: true });
      await mkdir(tmpDir, { recursive: true });
      const res = await fetch(`http://${firestoreHost}/emulator/v1/projects/${projectId}:export`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          database: `projects/${projectId}/databases/(default)`,
          export_directory: tmpDir,
        }),
        // A wedged emulator must not hold a stop for ever; the previous export stays in place.
        signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`Firestore export failed: ${res.status} ${await res.text()}`);
      // Swapped in by renames, so a crash at any moment leaves a whole export on disk: the
      // new one, or the previous one under `.old` (which start-up falls back to).
      const oldDir = `${finalDir}.old`;
      await rm(oldDir, { recursive: true, force: true });
      if (existsSync(finalDir)) await rename(finalDir, oldDir);
      await rename(tmpDir, finalDir);
      await rm(oldDir, { recursive: true, force: true });
    },
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
    },
  };
}

async function findExportMetadata(dir: string): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  const entries = await readdir(dir, { recursive: true });
  const meta = entries.find((e) => e.endsWith('.overall_export_metadata'));
  return meta ? join(dir, meta) : undefined;
}

function assertInstalled(): void {
  for (const bin of [FIRESTORE_EMULATOR_BIN, PUBSUB_EMULATOR_BIN]) {
    if (!existsSync(bin)) {
      throw new Error(
        `${bin} is missing. Install the emulators with:\n` +
          '  sudo apt-get install -y google-cloud-cli-firestore-emulator google-cloud-cli-pubsub-emulator',
      );
    }
  }
}
