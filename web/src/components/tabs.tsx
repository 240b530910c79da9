/**
 * Accessible tabs (WAI-ARIA tabs pattern): a tablist whose arrow keys, Home and End
 * move between tabs, each tab controlling one panel.
 *
 * @example
 *   <Tabs label="Job" tabs={[{ id: 'yaml', label: 'Definition', panel: () => <Yaml /> }]} />
 */
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';

export interface Tab {
  id: string;
  label: string;
  panel: () => ComponentChildren;
}

export function Tabs({ label, tabs, initial }: { label: string; tabs: Tab[]; initial?: string }) {
  const [active, setActive] = useState(initial ?? tabs[0]!.id);
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const select = (id: string) => {
    setActive(id);
    refs.current[id]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === active);
    const next =
      e.key === 'ArrowRight'
        ? (i + 1) % tabs.length
        : e.key === 'ArrowLeft'
          ? (i - 1 + tabs.length) % tabs.length
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? tabs.length - 1
              : -1;
    if (next < 0) return;
    e.preventDefault();
    select(tabs[next]!.id);
  };
  const current = tabs.find((t) => t.id === active) ?? tabs[0]!;
  return (
    <div class="tabs">
      <div role="tablist" aria-label={label} onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={t.id === current.id}
            aria-controls={`panel-${t.id}`}
            tabIndex={t.id === current.id ? 0 : -1}
            ref={(el) => {
              refs.current[t.id] = el;
            }}
            onClick={() => setActive(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <section role="tabpanel" id={`panel-${current.id}`} aria-labelledby={`tab-${current.id}`}>
        {current.panel()}
      </section>
    </div>
  );
}
