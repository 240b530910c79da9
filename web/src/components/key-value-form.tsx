/**
 * The form that adds or edits one context key: key, type and value, with a JSON editor
 * for objects and arrays. Problems appear next to the field they concern: the
 * browser's own checks first, then the API's `details` for that key.
 */
import { useId, useState } from 'preact/hooks';
import type { JsonValue } from '../api.ts';
import { editorType, parseTyped, toText, VALUE_TYPES, type ValueType } from '../lib/typed-value.ts';
import { detailsFor, ErrorMessage } from './error-message.tsx';

interface Props {
  /** Editing an existing key: the key is fixed. */
  fixedKey?: string;
  initial?: JsonValue;
  submitLabel: string;
  onSubmit: (key: string, value: JsonValue) => Promise<void>;
  onCancel?: () => void;
}

export function KeyValueForm({ fixedKey, initial, submitLabel, onSubmit, onCancel }: Props) {
  const id = useId();
  const [key, setKey] = useState(fixedKey ?? '');
  const [type, setType] = useState<ValueType>(initial === undefined ? 'string' : editorType(initial));
  const [text, setText] = useState(initial === undefined ? '' : toText(initial));
  const [valueError, setValueError] = useState<string | undefined>();
  const [apiError, setApiError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);

  const k = fixedKey ?? key.trim();
  // The API names the key in `details[].path`: in the add form that is about the key
  // (its name), in the edit form about the value.
  const fieldProblems = k ? detailsFor(apiError, k) : [];
  const keyProblems = fixedKey ? [] : fieldProblems;
  const valueProblems = [...(valueError ? [valueError] : []), ...(fixedKey ? fieldProblems : [])];
  const otherError = apiError && fieldProblems.length === 0 ? apiError : undefined;

  const changeType = (next: ValueType) => {
    setType(next);
    if (next === 'boolean' && text !== 'true' && text !== 'false') setText('true');
    setValueError(undefined);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setApiError(undefined);
    const parsed = parseTyped(type, text);
    if (!parsed.ok) {
      setValueError(parsed.error);
      return;
    }
    setValueError(undefined);
    setBusy(true);
    try {
      await onSubmit(k, parsed.value);
      if (!fixedKey) {
        setKey('');
        setText('');
      }
    } catch (err) {
      setApiError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const valueId = `${id}-value`;
  const valueErrId = `${id}-value-error`;
  const keyErrId = `${id}-key-error`;
  return (
    <form class="kv-form" onSubmit={submit} aria-label={fixedKey ? `Edit ${fixedKey}` : 'Add a key'}>
      {!fixedKey && (
        <div class="field">
          <label for={`${id}-key`}>Key</label>
          <input
            disabled={busy}
            id={`${id}-key`}
            name="key"
            required
            autocomplete="off"
            spellcheck={false}
            value={key}
            onInput={(e) => {
              setKey(e.currentTarget.value);
              setApiError(undefined);
            }}
            aria-invalid={keyProblems.length > 0}
            aria-describedby={keyProblems.length ? keyErrId : undefined}
          />
          {keyProblems.length > 0 && (
            <p class="field-error" id={keyErrId} role="alert">
              {keyProblems.join('; ')}
            </p>
          )}
        </div>
      )}
      <div class="field">
        <label for={`${id}-type`}>Type</label>
        <select
          id={`${id}-type`}
          disabled={busy}
          value={type}
          onChange={(e) => changeType(e.currentTarget.value as ValueType)}
        >
          {VALUE_TYPES.map((t) => (
            <option key={t.value} value={t.value}>
              {t.label}
            </option>
          ))}
        </select>
      </div>
      <div class={`field field-value${type === 'json' ? ' field-json' : ''}`}>
        <label for={valueId}>{fixedKey ? `Value of ${fixedKey}` : 'Value'}</label>
        {type === 'json' ? (
          <textarea
            disabled={busy}
            id={valueId}
            rows={6}
            spellcheck={false}
            class="json-editor"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            aria-invalid={valueProblems.length > 0}
            aria-describedby={valueProblems.length ? valueErrId : undefined}
          />
        ) : type === 'boolean' ? (
          <select id={valueId} disabled={busy} value={text} onChange={(e) => setText(e.currentTarget.value)}>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        ) : (
          <input
            disabled={busy}
            id={valueId}
            inputMode={type === 'number' ? 'decimal' : undefined}
            autocomplete="off"
            spellcheck={false}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            aria-invalid={valueProblems.length > 0}
            aria-describedby={valueProblems.length ? valueErrId : undefined}
          />
        )}
        {valueProblems.length > 0 && (
          <p class="field-error" id={valueErrId} role="alert">
            {valueProblems.join('; ')}
          </p>
        )}
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <ErrorMessage error={otherError} />
    </form>
  );
}
