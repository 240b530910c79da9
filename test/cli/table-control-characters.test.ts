import { expect, it } from 'vitest';
import { formatResult } from '../../cli/output.ts';

it('a table shows control characters in names as \\xNN text, never as escape sequences the terminal obeys', () => {
  // An API key named to retitle the admin's terminal window and turn its text red.
  const name = 'ci\u001b]0;pwned\u0007\u001b[31mred\u009b2J';
  const table = formatResult([{ name, role: 'viewer' }], 'table', { columns: ['name', 'role'] });
  expect(table).toContain('ci\\x1b]0;pwned\\x07\\x1b[31mred\\x9b2J');
  expect([...table].some((c) => c === '\u001b' || c === '\u0007' || c === '\u009b')).toBe(false);
  // JSON and YAML are for scripts: the value as it is, escaped by their own rules.
  expect(JSON.parse(formatResult([{ name }], 'json'))[0].name).toBe(name);
});
