import { expect, it } from 'vitest';
import { CUT_MARK, excerpt } from '../../functions/runner/excerpt.ts';

it('an excerpt keeps a short text whole and marks a cut, never between the halves of a character', () => {
  expect(excerpt('short', 5)).toBe('short');
  expect(excerpt('longer text', 6)).toBe(`longer${CUT_MARK}`);
  // 😀 is two UTF-16 units: a cut after the first keeps neither.
  expect(excerpt('ab😀cd', 3)).toBe(`ab${CUT_MARK}`);
  expect(excerpt('ab😀cd', 4)).toBe(`ab😀${CUT_MARK}`);
});
