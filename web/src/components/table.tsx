/**
 * The parts every table of the app repeats. `TableHead`: one `<th scope="col">` per column
 * and, with `actions`, a last column for the rows' buttons, named for screen readers only.
 * `EmptyRow`: the row saying a table has no rows yet, across all its columns.
 *
 * @example
 *   <TableHead columns={['Key', 'Type', 'Value']} actions />
 *   {rows.length === 0 && <EmptyRow span={4}>No keys yet.</EmptyRow>}
 */
import type { ComponentChildren } from 'preact';

export function TableHead({ columns, actions = false }: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th scope="col" key={column}>
            {column}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

export function EmptyRow({ span, children }: { span: number; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={span} class="empty">
        {children}
      </td>
    </tr>
  );
}
