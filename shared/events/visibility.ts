/**
 * What of an event a viewer sees. Workers write telemetry payloads, and those quote what a
 * job read or was answered: a `job-errors` sample of an object's content, an upstream
 * answer in a message, an error text in a state transition. Operators (who run the jobs)
 * see payloads whole; viewers see, of events a worker or job wrote, only the fields that
 * describe without quoting (counts, states, reasons, names), and the names of the others.
 *
 * @example
 *   forViewer({ source: 'job', payload: { reason: 'invalid-json', sample: '{"card":...' } })
 *   // payload: { reason: 'invalid-json', withheld: ['sample'] }
 */

/** Payload fields that never carry content a job read or received. */
const DESCRIPTIVE_FIELDS: ReadonlySet<string> = new Set([
  'reason',
  'level',
  'input',
  'output',
  'bucket',
  'object',
  'status',
  'events',
  'count',
  'ms',
  'bytes',
  'batches',
  'retries',
  'failures',
  'version',
  'from',
  'to',
  'state',
  'window',
  'attempts',
  'listed',
  'read',
  'skipped',
  'delivered',
  'failed',
]);

export function forViewer<E extends { source: string; payload: Record<string, unknown> }>(event: E): E {
  if (event.source === 'server') return event;
  const payload: Record<string, unknown> = {};
  const withheld: string[] = [];
  for (const [field, value] of Object.entries(event.payload ?? {})) {
    if (DESCRIPTIVE_FIELDS.has(field)) payload[field] = value;
    else withheld.push(field);
  }
  if (withheld.length) payload.withheld = withheld;
  return { ...event, payload };
}

/**
 * A job's deployment as a viewer sees it: its `error` is the run's error text, which quotes
 * what the job read or was answered as an event's `error` does, so it is withheld the same way.
 *
 * @example
 *   deploymentForViewer({ worker: 'w1', state: 'failed', error: 'answered 500: <html>…' });
 *   // { worker: 'w1', state: 'failed', withheld: ['error'] }
 */
export function deploymentForViewer<D extends { error?: string | undefined }>(
  deployment: D,
): Omit<D, 'error'> & { withheld?: string[] } {
  if (deployment.error === undefined) return deployment;
  const { error: _, ...shown } = deployment;
  return { ...shown, withheld: ['error'] };
}
