// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} and ${dyn|..} are literal job text here
import { describe, expect, it } from 'vitest';
import { resolveRuntimeRefs, runtimeReferenceProblem } from '../../shared/runtime-refs.ts';

describe('runtime reference syntax', () => {
  it('leaves text that is not an attempted reference alone', () => {
    for (const text of ['$HOME', '${HOME}', '${HOME:-/root}', '${', '$', '${a||b}', '${ a | b }', '${1|x}'])
      expect(runtimeReferenceProblem(text), text).toBeUndefined();
  });

  it('accepts exactly the forms a worker resolves', () => {
    for (const text of [
      '${secret|db/password}',
      '${secret| db/pass.v2 }',
      '${dyn|ENV}',
      '${dyn|ENV||dev}',
      '${dyn|ENV||}',
      '${dyn|a.b-c_d||x|y}',
    ])
      expect(runtimeReferenceProblem(text), text).toBeUndefined();
  });

  it('refuses kinds in another case or spaced, naming the right one', () => {
    expect(runtimeReferenceProblem('${Secret|a/b}')).toMatch(/did you mean `\$\{secret\|`/);
    expect(runtimeReferenceProblem('${ dyn |X}')).toMatch(/`\$\{ dyn \|` is not a runtime reference/);
    expect(runtimeReferenceProblem('${var|X}')).toMatch(/`\$\{var\|` is not a runtime reference/);
    expect(runtimeReferenceProblem('${secret||x}')).toMatch(/no default form/);
    expect(runtimeReferenceProblem('${secret|a/b/c}')).toMatch(/is not a secret reference/);
    expect(runtimeReferenceProblem('x\n${dyn|a b}')).toMatch(/^`\$\{dyn\|a b\}` is not a variable reference/);
  });

  it('resolves only variables that exist, not names every object answers to', () => {
    const r = resolveRuntimeRefs(
      { url: '${dyn|constructor||none}/${dyn|toString||x}' },
      { secrets: {}, variables: {} },
    );
    expect(r).toEqual({ ok: true, value: { url: 'none/x' } });
  });
});
