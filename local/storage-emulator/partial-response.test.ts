import { describe, expect, it } from 'vitest';
import { applyFields, parseFields } from './partial-response.ts';

describe('partial responses (`fields`)', () => {
  const body = {
    kind: 'storage#objects',
    nextPageToken: 't',
    items: [
      { name: 'a', size: '1', metadata: { color: 'red', shape: 'round' }, owner: { entity: 'x', id: 'y' } },
      { name: 'b', size: '2' },
    ],
  };

  it('selects nested fields with parentheses and slashes, through arrays', () => {
    expect(applyFields(body, parseFields('items(name,metadata/color),nextPageToken'))).toEqual({
      nextPageToken: 't',
      items: [{ name: 'a', metadata: { color: 'red' } }, { name: 'b' }],
    });
    expect(applyFields(body, parseFields('items/owner(entity), kind'))).toEqual({
      kind: 'storage#objects',
      items: [{ owner: { entity: 'x' } }, {}],
    });
  });

  it('merges repeated selections; a whole field wins over a part of it', () => {
    expect(applyFields(body, parseFields('items(name),items(size)'))).toEqual({
      items: [
        { name: 'a', size: '1' },
        { name: 'b', size: '2' },
      ],
    });
    expect(applyFields(body, parseFields('items/metadata/color,items/metadata'))).toEqual({
      items: [{ metadata: { color: 'red', shape: 'round' } }, {}],
    });
  });

  it('refuses malformed selections', () => {
    for (const bad of ['items(name', 'items)', 'a,,b', 'a/', '(name)'])
      expect(() => parseFields(bad)).toThrow();
  });
});
