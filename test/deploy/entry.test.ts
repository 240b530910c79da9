/**
 * The Cloud Function entry runtime: an HTTP function serves a family's routes from a
 * Functions-Framework-style request (body already read into `rawBody`), the bundled
 * archives answer requests, and the scheduled function runs its tasks loudly.
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRoute, z } from '@hono/zod-openapi';
import { afterAll, describe, expect, it } from 'vitest';
import { cloudClients } from '../../functions/adapters/clients.ts';
import { loadConfig } from '../../functions/app/config.ts';
import { createApp } from '../../functions/app/create-app.ts';
import type { AppDeps } from '../../functions/app/deps.ts';
import { createLogger } from '../../functions/app/logger.ts';
import { createRouter } from '../../functions/app/router.ts';
import { type HttpHandler, httpFunction } from '../../functions/entry/http-function.ts';
import { entryTable } from '../../functions/entry/table.ts';
import { dueTasks, tasksFunction } from '../../functions/entry/tasks-function.ts';
import { ALL_FAMILIES } from '../../functions/families.ts';
import { buildFunctions } from '../../scripts/build.ts';

const deps: AppDeps = {
  config: loadConfig({}),
  clients: cloudClients({ projectId: 'demo-entry-test' }),
  logger: createLogger({ level: 'silent' }),
};

function echoFamily() {
  const routes = createRouter();
  routes.openapi(
    createRoute({
      method: 'post',
      path: '/echo',
      request: { body: { content: { 'application/json': { schema: z.object({ word: z.string() }) } } } },
      responses: { 200: { description: 'echo' } },
    }),
    (c) => c.json({ heard: c.req.valid('json').word }, 200),
  );
  return { name: 'echo', routes };
}

/** Serves a handler the way the Functions Framework does: body-parser has consumed the stream first. */
async function serveLikeFunctionsFramework(
  handler: HttpHandler | ((req: IncomingMessage, res: ServerResponse) => Promise<void>),
) {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    (req as IncomingMessage & { rawBody: Buffer }).rawBody = Buffer.concat(chunks);
    await handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('httpFunction', () => {
  it('passes the already-read body to the family and keeps the contract edge', async () => {
    const fn = await serveLikeFunctionsFramework(httpFunction([echoFamily], deps));
    try {
      const ok = await fetch(`${fn.url}/api/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ word: 'sluice' }),
      });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ heard: 'sluice' });

      const bad = await fetch(`${fn.url}/api/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ word: 7 }),
      });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error.code).toBe('invalid_request');

      const missing = await fetch(`${fn.url}/api/nothing-here`);
      expect(missing.status).toBe(404);
      expect((await missing.json()).error.code).toBe('not_found');
    } finally {
      await fn.close();
    }
  });
});

describe('tasksFunction', () => {
  const call = async (handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) => {
    const fn = await serveLikeFunctionsFramework(handler);
    try {
      const res = await fetch(fn.url, { method: 'POST', body: '{}' });
      return { status: res.status, body: await res.json() };
    } finally {
      await fn.close();
    }
  };

  it('answers 503 when no task is registered, so a missing runner is visible', async () => {
    const { status, body } = await call(tasksFunction([], { deps }));
    expect(status).toBe(503);
    expect(body.error.code).toBe('unavailable');
  });

  it('runs the due tasks and reports a failing one with 500', async () => {
    const ran: string[] = [];
    const tasks = [
      { name: 'drain', everyMs: 1000, run: async () => void ran.push('drain') },
      { name: 'broken', everyMs: 1000, run: async () => Promise.reject(new Error('boom')) },
      { name: 'hourly', everyMs: 3_600_000, run: async () => void ran.push('hourly') },
    ];
    const now = () => Date.UTC(2026, 0, 1, 12, 30); // not on an hour boundary
    const { status, body } = await call(tasksFunction(tasks, { deps, tickMs: 60_000, now }));
    expect(status).toBe(500);
    expect(body.error.message).toContain('broken');
    expect(ran).toEqual(['drain']);
  });

  it('runs a long-period task on the tick that crosses its period', () => {
    const hourly = { name: 'hourly', everyMs: 3_600_000, run: async () => {} };
    expect(dueTasks([hourly], Date.UTC(2026, 0, 1, 13, 0, 30), 60_000)).toEqual([hourly]);
    expect(dueTasks([hourly], Date.UTC(2026, 0, 1, 13, 1, 30), 60_000)).toEqual([]);
  });
});

describe('npm run build', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'sluice-build-test-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('makes one archive per entry whose bundle serves its family with the SDKs external', async () => {
    const built = await buildFunctions(outDir);
    expect(built.map((f) => f.name).sort()).toEqual((await entryTable()).map((e) => e.name).sort());
    const health = built.find((f) => f.name === 'health')!;
    expect(health.dependencies).toHaveProperty('@google-cloud/firestore');
    const bundle = readFileSync(join(outDir, 'health/index.js'), 'utf8');
    expect(bundle).not.toContain('google-gax');

    const { handler } = (await import(pathToFileURL(join(outDir, 'health/index.js')).href)) as {
      handler: HttpHandler;
    };
    const fn = await serveLikeFunctionsFramework(handler);
    try {
      const res = await fetch(`${fn.url}/api/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    } finally {
      await fn.close();
    }

    // The OpenAPI function serves the document of every family, written at build time: its
    // bundle holds no route family.
    const docs = (await import(pathToFileURL(join(outDir, 'openapi/index.js')).href)) as {
      handler: HttpHandler;
    };
    expect(readFileSync(join(outDir, 'openapi/index.js'), 'utf8')).not.toContain('zod');
    const served = await serveLikeFunctionsFramework(docs.handler);
    try {
      const res = await fetch(`${served.url}/api/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const local = await createApp(deps, ALL_FAMILIES).request('/api/openapi.json');
      expect(await res.json()).toEqual(await local.json());
      const other = await fetch(`${served.url}/api/jobs`);
      expect(other.status).toBe(404);
      expect((await other.json()).error.code).toBe('not_found');
    } finally {
      await served.close();
    }
  }, 120_000);
});
