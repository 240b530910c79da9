// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { eventsFamily } from '../events/routes.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction([eventsFamily]);
