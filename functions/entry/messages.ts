// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { messagesFamily } from '../messages/routes.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction([messagesFamily]);
