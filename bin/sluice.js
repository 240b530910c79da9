#!/usr/bin/env node
// The `sluice` command. TypeScript sources run through tsx's loader, so the CLI
// needs no build step on a fresh clone.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv);
