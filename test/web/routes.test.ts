/**
 * The browser router's page matching: an address whose worker or job segment is not valid
 * percent-encoding names no page (Not found), where `decodeURIComponent` used to throw
 * `URI malformed` and leave the page blank.
 */
import { describe, expect, it } from 'vitest';
import { matchPage } from '../../web/src/routes.ts';

describe('matchPage', () => {
  it('decodes a worker or job name', () => {
    expect(matchPage('/jobs/a%20b')).toEqual({ page: 'job', param: 'a b' });
    expect(matchPage('/workers/eu%2Dwest/')).toEqual({ page: 'worker', param: 'eu-west' });
  });

  it('matches no page for a malformed percent-encoding, without throwing', () => {
    for (const path of ['/jobs/%E0%A4%A', '/workers/%E0%A4%A', '/jobs/%', '/jobs/%zz', '/workers/%C3'])
      expect(() => matchPage(path), path).not.toThrow();
    expect(matchPage('/jobs/%E0%A4%A')).toBeUndefined();
    expect(matchPage('/workers/%E0%A4%A')).toBeUndefined();
    expect(matchPage('/jobs/%')).toBeUndefined();
  });
});
