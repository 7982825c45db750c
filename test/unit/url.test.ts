import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { traceUrl } from '../../src/api/trace.js';
import { apiUrl, encodeQuery, isLoopbackHost, normaliseBaseUrl } from '../../src/api/url.js';
import { UsageError } from '../../src/errors.js';
import '../reliability.js';
import { anyText } from './any-text.js';

describe('apiUrl', () => {
  it('joins a plain base URL and a path', () => {
    expect(apiUrl('https://api.example.com', '/modalities')).toBe(
      'https://api.example.com/api/v2/modalities',
    );
  });
  it('keeps a path prefix on the base URL', () => {
    expect(apiUrl('https://gw.example.com/imaging', '/cpt_codes')).toBe(
      'https://gw.example.com/imaging/api/v2/cpt_codes',
    );
    expect(apiUrl('https://gw.example.com/imaging/', 'cpt_codes')).toBe(
      'https://gw.example.com/imaging/api/v2/cpt_codes',
    );
  });
  it('does not double /api/v2 on the base URL or on the path', () => {
    expect(apiUrl('https://gw.example.com/imaging/api/v2', '/modalities')).toBe(
      'https://gw.example.com/imaging/api/v2/modalities',
    );
    expect(apiUrl('https://gw.example.com/api/v2/', '/api/v2/modalities')).toBe(
      'https://gw.example.com/api/v2/modalities',
    );
    expect(apiUrl('https://gw.example.com', 'api/v2/referrals/1')).toBe(
      'https://gw.example.com/api/v2/referrals/1',
    );
  });
  it('encodes array parameters as ids[]= and escapes values', () => {
    expect(
      apiUrl('https://x.test', '/icd10_codes', {
        q: 'knee & hip',
        ids: ['a', 'b'],
        page: 2,
        none: undefined,
      }),
    ).toBe('https://x.test/api/v2/icd10_codes?q=knee%20%26%20hip&ids[]=a&ids[]=b&page=2');
  });
  it('keeps a query string given in the path and adds the rest', () => {
    expect(apiUrl('https://x.test', '/referrals?status=pending', { page: 3 })).toBe(
      'https://x.test/api/v2/referrals?status=pending&page=3',
    );
  });
});

describe('encodeQuery', () => {
  it('skips null and undefined, keeps empty strings and zero', () => {
    expect(encodeQuery({ a: null, b: undefined, c: '', d: 0, e: false })).toBe('c=&d=0&e=false');
  });
  it('does not add a second [] to a key that has one', () => {
    expect(encodeQuery({ 'ids[]': ['x'] })).toBe('ids[]=x');
  });
});

describe('normaliseBaseUrl', () => {
  it('rejects what is not an http(s) URL, credentials and queries', () => {
    expect(() => normaliseBaseUrl('api.example.com')).toThrow(UsageError);
    expect(() => normaliseBaseUrl('ftp://x.test')).toThrow(/only http and https/);
    expect(() => normaliseBaseUrl('https://user:pw@x.test')).toThrow(/credentials/);
    expect(() => normaliseBaseUrl('https://x.test/?a=1')).toThrow(/query/);
  });
  it('drops trailing slashes and a trailing /api/v2', () => {
    expect(normaliseBaseUrl('https://x.test/pre/api/v2///')).toBe('https://x.test/pre');
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['[::1]', true],
    ['10.0.0.1', false],
    ['example.com', false],
    ['127.0.0.1.nip.io', false],
  ])('%s -> %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('traceUrl', () => {
  it('redacts query values on patient-data paths but keeps paging', () => {
    expect(traceUrl('https://x.test/api/v2/referrals?patient_name=Jane%20Doe&page=2')).toBe(
      'https://x.test/api/v2/referrals?patient_name=[redacted]&page=2',
    );
  });
  it("redacts every query value on any path but paging and the reference lookups' own", () => {
    expect(
      traceUrl('https://x.test/api/v2/search?q=Garcia%2C%20Mary&dob=1992-03-10&sig=abc&per_page=5'),
    ).toBe('https://x.test/api/v2/search?q=[redacted]&dob=[redacted]&sig=[redacted]&per_page=5');
    expect(traceUrl('https://x.test/api/v2/icd10_codes?q=knee&code=x')).toBe(
      'https://x.test/api/v2/icd10_codes?q=[redacted]&code=[redacted]',
    );
    // A malformed escape in a name is redacted, never a crash.
    expect(traceUrl('https://x.test/a?%E0%A4%A=1')).toBe('https://x.test/a?%E0%A4%A=[redacted]');
  });
  it('leaves reference lookups readable', () => {
    expect(traceUrl('https://x.test/api/v2/cpt_codes?code=73721')).toBe(
      'https://x.test/api/v2/cpt_codes?code=73721',
    );
  });
});

describe('URL joiner and query encoder', () => {
  /** Hostile input, as properties (fast-check): the parsers and writers that meet outside data. */

  const RUNS = 400;

  const segment = fc.stringMatching(/^[a-z0-9_-]{1,10}$/);
  it('keeps any path prefix, never doubles /api/v2, and encodes any query losslessly', () => {
    fc.assert(
      fc.property(
        fc.array(segment, { maxLength: 3 }),
        fc.boolean(),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !k.endsWith('[]')),
          fc.oneof(anyText(), fc.array(fc.string(), { minLength: 1, maxLength: 3 })),
        ),
        (prefix, baseHasApi, path, pathHasApi, query) => {
          const base = `https://gw.example.com${prefix.map((p) => `/${p}`).join('')}${baseHasApi ? '/api/v2' : ''}/`;
          const p = `${pathHasApi ? '/api/v2' : ''}/${path.join('/')}`;
          const url = new URL(apiUrl(base, p, query));
          expect(url.pathname).toBe(`${prefix.map((s) => `/${s}`).join('')}/api/v2/${path.join('/')}`);
          const params = new URLSearchParams(url.search);
          for (const [k, v] of Object.entries(query)) {
            if (Array.isArray(v)) expect(params.getAll(`${k}[]`)).toEqual(v);
            else expect(params.get(k)).toBe(v);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('encodeQuery output parses back to the same pairs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(anyText({ minLength: 1 }), anyText()), {
          maxLength: 6,
        }),
        (pairs) => {
          const q = Object.fromEntries(pairs);
          const back = [...new URLSearchParams(encodeQuery(q))];
          expect(back).toEqual(Object.entries(q));
        },
      ),
      { numRuns: RUNS },
    );
  });
});
