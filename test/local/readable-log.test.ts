/**
 * The `npm start` terminal shows every failed request, and anyone who can reach the stack can
 * choose a request's path: `GET /api/jobs/%1b%5b2J` (no login needed for a 401) put a raw
 * escape sequence in the operator's terminal. The readable log shows control and
 * bidirectional characters as text.
 */
import { describe, expect, it } from 'vitest';
import { readableLine } from '../../local/readable-log.ts';

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ time: '2026-11-27T02:10:00.123Z', level: 'warn', msg: 'request', ...fields });

describe('readableLine', () => {
  it('shows control characters of a request path as text', () => {
    const shown = readableLine(
      line({ method: 'GET', path: '/api/jobs/\u001b]0;PWNED\u0007\u001b[2J', status: 401, ms: 1.2 }),
    );
    expect(shown).toBe('02:10:00.123 WARN  request GET /api/jobs/\\x1b]0;PWNED\\x07\\x1b[2J 401 1.2 ms');
  });

  it('shows bidirectional overrides and escapes in other fields, and in lines that are not JSON', () => {
    expect(readableLine(line({ subject: 'eve\u202egpj.exe' }))).toBe(
      '02:10:00.123 WARN  request subject=eve\\u202egpj.exe',
    );
    expect(readableLine('plain \u001b[31mred')).toBe('plain \\x1b[31mred');
  });
});
