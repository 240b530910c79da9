import { describe, expect, it } from 'vitest';
import { findRuntimeRefs, resolveRuntimeRefs } from '../../shared/runtime-refs.ts';

const definition = {
  input: {
    'http-poll': {
      url: 'http://x/${dyn|PATH||default}',
      headers: { a: '${secret|api/token}', b: '${dyn|ENV}' },
    },
  },
};

describe('runtime references', () => {
  it('finds secrets and variables', () => {
    expect(findRuntimeRefs(definition)).toEqual({ secrets: ['api/token'], variables: ['ENV', 'PATH'] });
  });

  it('substitutes values and fallbacks', () => {
    const r = resolveRuntimeRefs(definition, { secrets: { 'api/token': 't' }, variables: { ENV: 'prod' } });
    expect(r).toEqual({
      ok: true,
      value: { input: { 'http-poll': { url: 'http://x/default', headers: { a: 't', b: 'prod' } } } },
    });
  });

  it('names what is missing (secrets have no default form)', () => {
    expect(resolveRuntimeRefs(definition, { secrets: {}, variables: {} })).toEqual({
      ok: false,
      missing: ['secret api/token', 'variable ENV'],
    });
  });
});
