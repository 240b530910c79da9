/**
 * A job's actions, in the order they apply to each event between input and output
 * (docs/actions.md). Shows nothing for a job without actions.
 */
import { actionLines } from '../lib/actions-summary.ts';

export function ActionsList({ definition, heading }: { definition: unknown; heading: string }) {
  const lines = actionLines(definition);
  if (!lines.length) return null;
  const id = `actions-${heading.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return (
    <section class="actions" aria-labelledby={id}>
      <h3 id={id}>{heading}</h3>
      <ol class="actions-list">
        {lines.map((line, i) => (
          <li key={i} data-action={line.kind}>
            <span class="action-kind">{line.kind}</span> <code>{line.text}</code>
          </li>
        ))}
      </ol>
    </section>
  );
}
