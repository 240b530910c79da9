/** Small helpers for asserting on API responses in tests. */

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON bodies.
export async function json(res: Response): Promise<any> {
  return await res.json();
}

export function jsonInit(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
