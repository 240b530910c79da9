import { describe, expect, it } from 'vitest';
import { actionLines } from '../../web/src/lib/actions-summary.ts';

describe('actionLines', () => {
  it('reads every kind of action in order', () => {
    expect(
      actionLines({
        actions: [
          { filter: "event.level == 'error'" },
          { set: { 'http.code': 'event.status', seen: 'true' } },
          { remove: ['debug', 'trace'] },
          { rename: { msg: 'message' } },
          { keep: ['message', 'level'] },
          { 'parse-json': 'body' },
          { 'parse-timestamp': { field: 'at', format: '%d/%m/%Y' } },
        ],
      }),
    ).toEqual([
      { kind: 'filter', text: "event.level == 'error'" },
      { kind: 'set', text: 'http.code = event.status; seen = true' },
      { kind: 'remove', text: 'debug, trace' },
      { kind: 'rename', text: 'msg → message' },
      { kind: 'keep', text: 'message, level' },
      { kind: 'parse-json', text: 'body' },
      { kind: 'parse-timestamp', text: 'at (%d/%m/%Y)' },
    ]);
  });

  it('gives nothing for a job without actions, or no definition yet', () => {
    expect(actionLines({ name: 'x' })).toEqual([]);
    expect(actionLines(undefined)).toEqual([]);
  });
});
