// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { documentFunction } from './document-function.ts';

export const handler = documentFunction(import.meta.url, 'openapi.json', '/api/openapi.json');
