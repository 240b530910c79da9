import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{shared,functions,local,cli,test}/**/*.test.ts'],
    globalSetup: ['test/setup/emulators.ts'],
    // Two cores: a few forks keep emulator round trips overlapping without thrashing.
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
