/**
 * The headers every API answer carries, for browsers (the web UI calls the API with its
 * session cookie): an answer is not sniffed into HTML (a job's YAML may hold `<script>` an
 * operator wrote), not cached (it is what a token may read), not framed, and the API is
 * reached over HTTPS only from the first answer on (HSTS; browsers ignore it over HTTP and
 * for IP addresses, so the local stack is unaffected). Hono's secureHeaders writes them.
 *
 * @example
 *   app.use('/api/*', apiHeaders());
 */
import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';

const ONE_YEAR_S = 365 * 24 * 3600;

export function apiHeaders(): MiddlewareHandler {
  const secure = secureHeaders({
    strictTransportSecurity: `max-age=${ONE_YEAR_S}; includeSubDomains`,
    xFrameOptions: 'DENY',
  });
  return async (c, next) => {
    await secure(c, async () => {
      await next();
      if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
    });
  };
}
