#!/usr/bin/env node
// The `sluice` command: cli/main.ts, loaded from a bundle that is built on first use and
// whenever a source changed (cli-bundle.js says how), so a fresh clone needs no build step.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCli } from './cli-bundle.js';

const { main } = await loadCli(dirname(dirname(fileURLToPath(import.meta.url))));
process.exitCode = await main(process.argv);
