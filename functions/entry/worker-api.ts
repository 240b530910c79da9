// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { workerJobsFamily } from '../worker-api/jobs.ts';
import { httpFunction } from './http-function.ts';

export const handler = httpFunction([workerJobsFamily]);
