/**
 * The read worker's actions code (a job's actions applied where its lines are made): the
 * CEL interpreter and re2js, about 0.3 MB of the thread's script. Its own part
 * (read-parts.ts), loaded into a thread with the first task that has actions.
 */
import { compileActionChain } from '../actions/chain.ts';

export const actionsPart = { compileActionChain };
