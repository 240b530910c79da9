// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { apiKeysFamily } from '../api-keys/routes.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction([apiKeysFamily]);
