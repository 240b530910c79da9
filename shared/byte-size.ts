/**
 * Sizes in job files: a whole number of bytes, or `<number><unit>` with units `B`,
 * `KiB`, `MiB`, `GiB` (powers of 1024) or `KB`, `MB`, `GB` (powers of 1000).
 *
 * @example
 *   parseByteSize('16MiB'); // 16_777_216
 *   parseByteSize(1024); // 1024
 */

const UNIT_BYTES = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;
const SIZE = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)$/;

export function parseByteSize(value: string | number): number {
  if (typeof value === 'number' || /^\d+$/.test(value)) {
    const bytes = Number(value);
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`"${value}" is not a number of bytes`);
    return bytes;
  }
  const match = SIZE.exec(value.trim());
  if (!match) {
    throw new Error(
      `"${value}" is not a size: write bytes (1048576) or a number with B, KiB, MiB, GiB, KB, MB, GB`,
    );
  }
  return Math.floor(Number(match[1]) * UNIT_BYTES[match[2] as keyof typeof UNIT_BYTES]);
}

/** Bytes as a person reads them: `16 MiB`, `512 KiB`, `100 bytes`. */
export function formatByteSize(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}
