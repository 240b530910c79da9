/**
 * One cookie's value from a `document.cookie` string. A value that is not valid
 * percent-encoding (another application of the same site may set a cookie of the same name)
 * counts as absent: decoding it threw a URIError on every API request, and the app stopped.
 *
 * @example
 *   cookieValue('a=1; sluice_csrf=x%2By', 'sluice_csrf'); // 'x+y'
 */
export function cookieValue(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key !== name) continue;
    try {
      return decodeURIComponent(value.join('='));
    } catch {
      // Not ours: look on, a later cookie of the name may be.
    }
  }
  return undefined;
}
