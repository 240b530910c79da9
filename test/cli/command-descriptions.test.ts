import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/main.ts';
import { runCli } from '../helpers/cli.ts';

function* walk(command: Command, path: string[] = []): Generator<[string, Command]> {
  for (const sub of command.commands) {
    const name = [...path, sub.name()];
    yield [name.join(' '), sub];
    yield* walk(sub, name);
  }
}

const io = { stdout: () => {}, stderr: () => {}, stdinIsTty: true, readStdin: async () => '' };

describe('sluice --help', () => {
  it('describes every command and subcommand', () => {
    const missing = [...walk(buildProgram(io, {}))]
      .filter(([, command]) => !command.description().trim())
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('says what `worker run --state-dir` keeps, and that fingerprints go to the control plane', async () => {
    const help = (await runCli(['worker', 'run', '--help'])).stdout.replace(/\s+/g, ' ');
    const stateDir = help.slice(help.indexOf('--state-dir'), help.indexOf('--data-dir'));
    expect(stateDir).toContain('high-watermarks');
    expect(stateDir).not.toMatch(/fingerprints and/);
    expect(stateDir).toMatch(/fingerprints are kept by the control plane/);
  });
});
