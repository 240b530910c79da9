/**
 * Sign-in: username, password and optional tenant; starts a cookie session (POST /api/auth/login).
 * `notice` says why the page is shown (a session that ended); a 429 says when to try again.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorMessage } from '../components/error-message.tsx';

export function LoginPage({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string | undefined }) {
  const [error, setError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const tenant = String(form.get('tenant') ?? '').trim();
    setBusy(true);
    setError(undefined);
    try {
      await api.post('/api/auth/login', {
        username: String(form.get('username') ?? ''),
        password: String(form.get('password') ?? ''),
        ...(tenant ? { tenant } : {}),
      });
      onSignedIn();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="login">
      <h1>Sign in to Sluice</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <div class="field">
          <label for="username">Username</label>
          <input id="username" name="username" autocomplete="username" required />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
        </div>
        <div class="field">
          <label for="tenant">
            Tenant <span class="hint">(optional)</span>
          </label>
          <input id="tenant" name="tenant" autocomplete="off" />
        </div>
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
