// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { runnerFunction } from './runner-function.ts';

export const handler = runnerFunction();
