/**
 * The forms a secret value takes in what a job is told back: an upstream that echoes its
 * request quotes the value as the HTTP client sent it, encoded for the part of the URL it
 * was in (each part has its own set of characters to escape), as a form field, in JSON, in
 * base64 (a `Basic` header) — and with its escapes in lower case, which servers also write.
 * The redactor (redact.ts) hides every one of them.
 *
 * @example
 *   secretForms('a b/c'); // ['a b/c', 'a%20b%2Fc', 'a%20b/c', 'a+b%2Fc', …]
 */

/** Base64 text shorter than this could be anything's: it is not taken for the secret. */
const MIN_BASE64_FORM = 8;

export function secretForms(value: string): string[] {
  const escaped = [
    encodeURIComponent(value),
    encodeURI(value),
    urlPart(value, (url, v) => {
      url.search = v;
      return url.search.slice(1);
    }),
    urlPart(value, (url, v) => {
      url.pathname = `/${v}`;
      return url.pathname.slice(1);
    }),
    urlPart(value, (url, v) => {
      url.hash = v;
      return url.hash.slice(1);
    }),
    urlPart(value, (url, v) => {
      url.username = v;
      return url.username;
    }),
    new URLSearchParams({ v: value }).toString().slice(2),
  ];
  const lowerEscapes = escaped.map((form) => form.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()));
  return [
    ...new Set([
      value,
      JSON.stringify(value).slice(1, -1),
      ...escaped,
      ...lowerEscapes,
      ...base64Forms(value),
    ]),
  ].filter((form) => form.length > 0);
}

function urlPart(value: string, encode: (url: URL, value: string) => string): string {
  try {
    return encode(new URL('http://h/'), value);
  } catch {
    return value;
  }
}

/**
 * The secret's bytes in base64 (and base64url) wherever they start in the encoded text:
 * base64 writes 3 bytes as 4 characters, so the value's characters depend on its offset
 * modulo 3. For each offset, the characters that only its bytes decide (no neighbour's).
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value);
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const start = offset === 0 ? 0 : 4; // the first group holds the filler bytes
    const whole = Math.floor((offset + bytes.length) / 3) * 4; // groups of 3 of its bytes
    const form = encoded.slice(start, whole);
    if (form.length >= MIN_BASE64_FORM) forms.push(form, form.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}
