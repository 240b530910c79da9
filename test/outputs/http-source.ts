/** A local HTTP server answering a JSON array of `count` events, the input of output tests (http-poll). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function eventSource(count: number): Promise<{ url: string; close(): Promise<void> }> {
  const body = JSON.stringify(
    Array.from({ length: count }, (_, i) => ({ i, key: `k${i % 3}`, kind: i % 2 ? 'odd' : 'even' })),
  );
  const server = createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export const pollOf = (url: string) => ({ 'http-poll': { url, json: true } });
