/** The UI's cookie reader: the CSRF cookie is read on every state-changing request. */
import { describe, expect, it } from 'vitest';
import { cookieValue } from '../../web/src/lib/cookies.ts';

describe('cookieValue', () => {
  it('reads a cookie by name, decoded, with = in its value kept', () => {
    expect(cookieValue('a=1; sluice_csrf=x%2By; b=2', 'sluice_csrf')).toBe('x+y');
    expect(cookieValue('sluice_csrf=abc==', 'sluice_csrf')).toBe('abc==');
    expect(cookieValue('a=1', 'sluice_csrf')).toBeUndefined();
    expect(cookieValue('', 'sluice_csrf')).toBeUndefined();
  });

  it('skips a value that is not percent-encoding instead of throwing', () => {
    expect(cookieValue('sluice_csrf=%E0%A4%A', 'sluice_csrf')).toBeUndefined();
    expect(cookieValue('sluice_csrf=%; sluice_csrf=good', 'sluice_csrf')).toBe('good');
  });
});
