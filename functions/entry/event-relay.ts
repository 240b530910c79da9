// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { relayFunction } from './relay-function.ts';

export const handler = relayFunction();
