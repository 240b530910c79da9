import { describe, expect, it } from 'vitest';
import { parseRunRequest } from '../../shared/runs/run-request.ts';

const request = { tenant: 'acme', job: 'orders', version: 3, requested_ms: 1, reason: 'due' };

describe('run requests (the messages on sluice-runs)', () => {
  it('reads a request and a part request', () => {
    expect(parseRunRequest(JSON.stringify(request))).toEqual({ ok: true, request });
    const part = { ...request, reason: 'part', part: { run: 'r1', index: 0, objects: [{ name: 'a' }] } };
    expect(parseRunRequest(new TextEncoder().encode(JSON.stringify(part)))).toEqual({
      ok: true,
      request: part,
    });
  });

  it('says what is wrong with anything else', () => {
    expect(parseRunRequest('{')).toEqual({ ok: false, error: 'not JSON' });
    for (const [bad, path] of [
      [{ ...request, tenant: '' }, 'tenant'],
      [{ ...request, reason: 'now' }, 'reason'],
      [{ ...request, extra: 1 }, ''],
      [{ ...request, reason: 'part' }, ''],
      [{ ...request, part: { run: 'r', index: 0, objects: [{}] } }, ''],
      [{ ...request, reason: 'part', part: { run: 'r', index: 0, objects: [] } }, 'part.objects'],
    ] as const) {
      const parsed = parseRunRequest(JSON.stringify(bad));
      expect(parsed.ok, JSON.stringify(bad)).toBe(false);
      if (!parsed.ok) expect(parsed.error.startsWith(`${path}:`), parsed.error).toBe(true);
    }
  });
});
