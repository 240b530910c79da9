/**
 * `npm run bench:auth`: what authentication costs on one local process.
 * - `GET /api/auth/me` with a valid token vs the unauthenticated `GET /api/health`:
 *   requests/s and p50/p99 latency at a fixed concurrency (the difference is what the
 *   auth middleware adds: ES256 verification plus the cached credential check).
 * - `POST /api/tokens/create/user`: dominated by the scrypt password hash.
 * Needs the Google emulators: run it under `npm run emulators:exec -- "npm run bench:auth"`,
 * or with FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST set; otherwise it starts them.
 */
import { request } from 'undici';
import { startGoogleEmulators } from '../local/google-emulators.ts';
import { serveTestApp, testApp } from '../test/helpers/app.ts';
import { ADMIN_PASSWORD, bootstrapTestAdmin } from '../test/helpers/auth.ts';

const DURATION_MS = 5_000;

const emulators = await startGoogleEmulators();
process.env.FIRESTORE_EMULATOR_HOST = emulators.firestoreHost;
process.env.PUBSUB_EMULATOR_HOST = emulators.pubsubHost;
const t = await testApp();
const token = await bootstrapTestAdmin(t);
const server = await serveTestApp(t);

async function load(path: string, headers: Record<string, string>, concurrency: number) {
  const latencies: number[] = [];
  const until = performance.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await request(server.url + path, { headers });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return { rps: latencies.length / (DURATION_MS / 1000), p50: pct(0.5), p99: pct(0.99) };
}

try {
  const auth = { authorization: `Bearer ${token}` };
  await load('/api/health', {}, 8); // warm-up
  await load('/api/auth/me', auth, 8);
  const line = (name: string, r: { rps: number; p50: number; p99: number }) =>
    console.log(
      `  ${name.padEnd(34)} ${Math.round(r.rps).toString().padStart(6)} req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms`,
    );
  console.log(`one process (load generator in the same process), ${DURATION_MS / 1000} s per run`);
  for (const concurrency of [1, 16]) {
    const health = await load('/api/health', {}, concurrency);
    const me = await load('/api/auth/me', auth, concurrency);
    console.log(`${concurrency} connection(s):`);
    line('GET /api/health (no auth)', health);
    line('GET /api/auth/me (valid token)', me);
    console.log(
      `  auth adds at p50: ${(me.p50 - health.p50).toFixed(2)} ms; CPU per request: ${((1 / me.rps - 1 / health.rps) * 1000).toFixed(2)} ms`,
    );
  }

  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const res = await request(`${server.url}/api/tokens/create/user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
    });
    await res.body.text();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`POST /api/tokens/create/user: median ${times[5]!.toFixed(0)} ms (scrypt N=2^15, r=8, p=1)`);
} finally {
  await server.close();
  await t.close();
  await emulators.stop();
}
