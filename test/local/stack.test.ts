import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStack } from '../../local/stack.ts';
import { until } from '../helpers/until.ts';

describe('the local stack', () => {
  it('bootstraps the admin once, serves the API, and keeps data across a stop and restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-stack-'));
    const env = { ...process.env };
    delete env.SLUICE_ADMIN_PASSWORD;
    const first = await startStack({
      dataDir,
      port: 0,
      http: true,
      env,
      projectId: 'demo-stack-test',
      ownEmulators: true,
    });
    let password: string;
    try {
      expect(first.notices.join('\n')).toContain('created the system admin `admin`');
      password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();
      expect(statSync(join(dataDir, 'admin-password')).mode & 0o777).toBe(0o600);
      expect(await (await fetch(`${first.url}/api/health`)).json()).toEqual({ status: 'ok' });
      // The wake endpoint for notified jobs on the cloud worker runs beside the API (test/local/wake-endpoint.test.ts).
      expect((await fetch(`${first.wakeUrl}/wake`)).status).toBe(404);
      const token = await login(first.url, password);
      const saved = await fetch(`${first.url}/api/contexts/update-global`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ survives: 'restart' }),
      });
      expect(saved.status).toBe(200);
      const workers = await (
        await fetch(`${first.url}/api/workers`, { headers: { authorization: `Bearer ${token}` } })
      ).json();
      expect(workers.map((w: { id: string }) => w.id)).toEqual(expect.arrayContaining(['cloud', 'local']));
      const registered = await fetch(`${first.url}/api/workers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'edge-1' }),
      });
      expect(registered.status).toBe(201);
      // A `file` output on `local` writes in the stack's data folder (it had none, and every run failed).
      const auth = { authorization: `Bearer ${token}` };
      const job = `name: to-file\ninput:\n  http-poll:\n    url: ${first.url}/api/health\n    json: true\noutput:\n  file:\n    path: out/health.ndjson\n`;
      const put = await fetch(`${first.url}/api/jobs/to-file`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/yaml' },
        body: job,
      });
      expect(put.status).toBe(201);
      const deployed = await fetch(`${first.url}/api/jobs/to-file/deploy`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ workers: ['local'] }),
      });
      expect(deployed.status).toBe(200);
      const written = join(dataDir, 'local-worker-data', 'out', 'health.ndjson');
      await until(
        () => existsSync(written) && readFileSync(written, 'utf8').includes('"status":"ok"'),
        20_000,
        written,
      );
    } finally {
      await first.stop();
    }

    const second = await startStack({
      dataDir,
      port: 0,
      http: true,
      env,
      projectId: 'demo-stack-test',
      ownEmulators: true,
    });
    try {
      expect(second.notices).toEqual([]);
      const token = await login(second.url, password);
      const global = await (
        await fetch(`${second.url}/api/contexts/global`, { headers: { authorization: `Bearer ${token}` } })
      ).json();
      expect(global).toEqual({ survives: 'restart' });
      // The Pub/Sub emulator keeps nothing across a restart: every worker's channel is made again.
      const pubsub = await second.deps.clients.pubsub();
      for (const worker of ['local', 'edge-1'])
        expect((await pubsub.subscription(`sluice-w.default.${worker}`).exists())[0], worker).toBe(true);
    } finally {
      await second.stop();
    }
  }, 120_000);
});

describe('stopping the local stack', () => {
  it('takes seconds even while a worker holds a 20 s long poll open', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-stack-stop-'));
    const stack = await startStack({
      dataDir,
      port: 0,
      http: true,
      env: { ...process.env, SLUICE_ADMIN_PASSWORD: 'stop-test-password-1' },
      projectId: 'demo-stack-stop',
      ownEmulators: true,
    });
    let stopped = false;
    try {
      const admin = { authorization: `Bearer ${await login(stack.url, 'stop-test-password-1')}` };
      const { key } = (await (
        await fetch(`${stack.url}/api/workers`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'edge-stop' }),
        })
      ).json()) as { key: string };
      const { token } = (await (
        await fetch(`${stack.url}/api/tokens/create/api`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key }),
        })
      ).json()) as { token: string };
      // A first poll answers when its 1 s wait ends: the worker's channel is there. The second
      // is held for 20 s (nothing is sent to this worker) while the stack stops.
      const poll = (wait: string) =>
        fetch(`${stack.url}/api/worker/messages?wait=${wait}`, {
          headers: { authorization: `Bearer ${token}` },
        });
      expect((await poll('1s')).status).toBe(200);
      const held = poll('20s').catch(() => undefined);
      const started = performance.now();
      await stack.stop();
      stopped = true;
      // The export and the emulators' exit take their time; the long poll must not add its 20 s.
      expect(performance.now() - started).toBeLessThan(12_000);
      await held;
    } finally {
      if (!stopped) await stack.stop();
    }
  }, 120_000);
});

async function login(url: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/tokens/create/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return ((await res.json()) as { token: string }).token;
}
