// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { tokensFamily } from '../tokens/routes.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction([tokensFamily]);
