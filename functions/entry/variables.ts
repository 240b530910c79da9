// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { variablesFamily } from '../variables/routes.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction([variablesFamily]);
