// Generated from functions/entry/table.ts by `npm run build`; do not edit.
import { PERIODIC_TASKS } from '../scheduled/tasks.ts';
import { tasksFunction } from './tasks-function.ts';

export const handler = tasksFunction(PERIODIC_TASKS);
