/** Lines found in byte chunks, wherever the chunks happen to be cut. */
import { describe, expect, it } from 'vitest';
import { type LineSpans, splitLines } from './split.ts';

async function* chunked(...parts: (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

async function lines(
  chunks: AsyncIterable<Buffer>,
  maxLineBytes = 1000,
): Promise<{ lines: string[]; utf8: boolean[]; tooLong: [number, number][] }> {
  const tooLong: [number, number][] = [];
  const out: string[] = [];
  const utf8: boolean[] = [];
  for await (const { bytes, spans, utf8: valid } of splitLines(chunks, {
    maxLineBytes,
    onTooLong: (line, length) => tooLong.push([line, length]),
  }) as AsyncGenerator<LineSpans>) {
    for (let i = 0; i < spans.length; i += 2) out.push(bytes.toString('utf8', spans[i], spans[i + 1]));
    utf8.push(valid);
  }
  return { lines: out, utf8, tooLong };
}

describe('splitLines', () => {
  it('finds every line, across chunk cuts, without CR or blank lines, and the last line without a break', async () => {
    const result = await lines(chunked('{"a":1}\r\n{"b"', ':2}\n\n   \n', '{"c":', '3}\n', 'tail'));
    expect(result.lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}', 'tail']);
    expect(result.tooLong).toEqual([]);
  });

  it('keeps a long whitespace-only line (it is data) and drops short ones', async () => {
    const spaces = ' '.repeat(64);
    expect((await lines(chunked(`a\n \t \n${spaces}\nb\n`))).lines).toEqual(['a', spaces, 'b']);
  });

  it('reports a line over the limit with its number and skips it, in one chunk or across many', async () => {
    const long = 'x'.repeat(30);
    const one = await lines(chunked(`a\n${long}\nb\n`), 20);
    expect(one.lines).toEqual(['a', 'b']);
    expect(one.tooLong).toEqual([[2, 30]]);
    const many = await lines(chunked('a\nxxxxxxxxxx', 'xxxxxxxxxx', 'xxxxxxxxxx', 'x\nb\n'), 20);
    expect(many.lines).toEqual(['a', 'b']);
    expect(many.tooLong).toEqual([[2, 31]]);
  });

  it("reports a long line's whole length however the content is cut (a read thread's pieces are larger), the last line too", async () => {
    const content = `a\n${'y'.repeat(95)}\nb\n${'z'.repeat(57)}`;
    for (const size of [1, 7, 16, 50, 1000]) {
      const pieces: string[] = [];
      for (let at = 0; at < content.length; at += size) pieces.push(content.slice(at, at + size));
      const cut = await lines(chunked(...pieces), 20);
      expect(cut.lines, `pieces of ${size}`).toEqual(['a', 'b']);
      expect(cut.tooLong, `pieces of ${size}`).toEqual([
        [2, 95],
        [4, 57],
      ]);
    }
  });

  it('says whether the lines are UTF-8, and a character cut between chunks is still whole', async () => {
    const euro = Buffer.from('€');
    const cut = await lines(
      chunked(
        Buffer.concat([Buffer.from('{"a":"'), euro.subarray(0, 1)]),
        Buffer.concat([euro.subarray(1), Buffer.from('"}\n')]),
      ),
    );
    expect(cut).toMatchObject({ lines: ['{"a":"€"}'], utf8: [true] });
    const invalid = await lines(chunked(Buffer.from([0x61, 0xff, 0x0a, 0x62, 0x0a])));
    expect(invalid.utf8).toEqual([false]);
    expect(invalid.lines).toEqual(['a\ufffd', 'b']);
  });
});
