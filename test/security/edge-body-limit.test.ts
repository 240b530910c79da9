/**
 * A body over 1 MiB must get its 413 and the contract's error body, read by the client,
 * every time: not a connection reset while the client is still sending. Over real HTTPS
 * sockets, as the local stack serves (local/tls.ts), on every route that takes a body.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, type BodyInit as UndiciBody, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestAppOverHttps, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

const run = promisify(execFile);
async function sluice(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/sluice.js', ...args], {
      env: { ...process.env, SLUICE_CONFIG_DIR: dir, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-edge-413-'));
let t: TestApp;
let server: Awaited<ReturnType<typeof serveTestAppOverHttps>>;
let url: string;
let certPath: string;
let agent: Agent;
let token: string;
const TOO_LARGE = Buffer.alloc(2 * 1024 * 1024, 'a');

beforeAll(async () => {
  t = await testApp();
  token = await bootstrapTestAdmin(t);
  server = await serveTestAppOverHttps(t, dir);
  url = server.url;
  certPath = server.certPath;
  agent = new Agent({ connect: { ca: server.cert } });
});
afterAll(async () => {
  await agent.close();
  await server.close();
  await t.close();
});

/** Every route of the OpenAPI document that takes a body, with its path parameters filled in. */
async function routesWithBodies(): Promise<{ method: string; path: string }[]> {
  const doc = (await (await t.request('/api/openapi.json')).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>;
  };
  const routes: { method: string; path: string }[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (operation.requestBody)
        routes.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'x') });
    }
  }
  return routes;
}

async function send(method: string, path: string, body: Buffer | ReadableStream<Uint8Array>) {
  try {
    const res = await undiciFetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body as UndiciBody,
      ...(body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
      dispatcher: agent,
    });
    return { status: res.status, body: await res.json() };
  } catch (err) {
    return { status: 'socket error', body: String((err as Error & { cause?: Error }).cause ?? err) };
  }
}

const chunked = () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < 32; i++) controller.enqueue(TOO_LARGE.subarray(i * 65536, (i + 1) * 65536));
      controller.close();
    },
  });

const EXPECTED = {
  status: 413,
  body: { error: { code: 'payload_too_large', message: 'request body is larger than 1 MiB' } },
};

describe('an oversized request body', () => {
  it('gets 413 with the contract error body on every route, every time, with a length or chunked', async () => {
    const routes = await routesWithBodies();
    expect(routes.length).toBeGreaterThan(12);
    const outcomes: unknown[] = [];
    for (let round = 0; round < 3; round++) {
      for (const { method, path } of routes) {
        outcomes.push({ method, path, ...(await send(method, path, TOO_LARGE)) });
      }
    }
    for (const { method, path } of routes.slice(0, 6))
      outcomes.push({ method, path, ...(await send(method, path, chunked())) });
    expect(outcomes).toEqual(outcomes.map((o) => ({ ...(o as object), ...EXPECTED })));
  }, 120_000);

  it('keeps the connection usable for the next request after a refused body', async () => {
    for (let i = 0; i < 5; i++) {
      expect(await send('POST', '/api/contexts/update-global', TOO_LARGE)).toEqual(EXPECTED);
      const ok = await undiciFetch(`${url}/api/health`, { dispatcher: agent });
      expect(ok.status).toBe(200);
      await ok.text();
    }
  });

  it('reaches the CLI as the limit, not a socket error', async () => {
    const env = { SLUICE_SERVER: url, SLUICE_TOKEN: token };
    const exported = join(dir, 'big-context.json');
    writeFileSync(exported, JSON.stringify({ global: { filler: 'x'.repeat(2 * 1024 * 1024) } }));
    for (let i = 0; i < 5; i++) {
      const r = await runCli(['context', 'import', exported, '--ca-file', certPath], { env });
      expect(r).toMatchObject({ code: 1, stderr: 'error: request body is larger than 1 MiB\n' });
    }
    // As a user runs it: its own process, so the server is not sharing its event loop.
    for (let i = 0; i < 5; i++) {
      const r = await sluice(['context', 'import', exported, '--ca-file', certPath], env);
      expect(r).toMatchObject({ code: 1, stderr: 'error: request body is larger than 1 MiB\n' });
    }
    // `job apply` refuses a 2 MiB file before sending it, with the same limit.
    const job = join(dir, 'big.yaml');
    writeFileSync(job, `name: big\n${`# ${'x'.repeat(1000)}\n`.repeat(2100)}output:\n  print: {}\n`);
    const applied = await runCli(['job', 'apply', job, '--ca-file', certPath], { env });
    expect(applied.code).not.toBe(0);
    expect(applied.stderr).toContain('at most 1 MiB');
  }, 60_000);
});
