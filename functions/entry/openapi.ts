// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { ALL_FAMILIES } from '../families.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction(ALL_FAMILIES);
