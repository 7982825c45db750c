import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apiUrl, encodeQuery } from '../../src/api/url.js';
import { csvRow } from '../../src/output/csv.js';
import { CaptureError, parseCapture } from '../../src/webhook/capture.js';
import '../reliability.js';

/** Hostile input, as properties (fast-check): the parsers and writers that meet outside data. */

const RUNS = 400;

describe('raw HTTP capture parser', () => {
  it('never throws anything but a CaptureError, whatever the bytes', ({ task }) => {
    let n = 0;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
        n++;
        try {
          parseCapture(Buffer.from(bytes));
        } catch (err) {
          return err instanceof CaptureError;
        }
        return true;
      }),
      { numRuns: RUNS },
    );
    task.meta.badInputs = n;
  });

  it('gets back the exact body and headers of any request, CRLF or LF, plain or chunked', () => {
    const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/);
    const value = fc.stringMatching(/^[!-~]([ -~]{0,40}[!-~])?$/);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(token, value), { maxLength: 8 }),
        fc.uint8Array({ maxLength: 2048 }),
        fc.constantFrom('\r\n', '\n'),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }),
        (headers, body, eol, chunked, sizes) => {
          const hs = headers.filter(([k]) => !/^(content-length|transfer-encoding)$/i.test(k));
          const b = Buffer.from(body);
          let encoded: Buffer;
          if (chunked) {
            const parts: Buffer[] = [];
            let pos = 0;
            let i = 0;
            while (pos < b.length) {
              const size = Math.min(sizes[i++ % sizes.length]!, b.length - pos);
              parts.push(
                Buffer.from(`${size.toString(16)}\r\n`),
                b.subarray(pos, pos + size),
                Buffer.from('\r\n'),
              );
              pos += size;
            }
            parts.push(Buffer.from('0\r\n\r\n'));
            encoded = Buffer.concat(parts);
          } else encoded = b;
          const head = [
            'POST /hook HTTP/1.1',
            ...hs.map(([k, v]) => `${k}: ${v}`),
            chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${b.length}`,
          ].join(eol);
          const c = parseCapture(
            Buffer.concat([
              Buffer.from(`${head}${eol}${eol}`),
              encoded,
              Buffer.from(chunked ? '' : 'trailing junk'),
            ]),
          );
          expect(c.body.equals(b)).toBe(true);
          expect(c.headers.slice(0, hs.length)).toEqual(hs);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('CSV writer', () => {
  const cells = fc.array(
    fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('=1+1', '+SUM(A1)', '-2', '@x', '\tx', '\rx', 'a,"b"\r\nc'),
    ),
    {
      minLength: 1,
      maxLength: 6,
    },
  );

  it('any strings round-trip through a standard CSV parser (guard off: exactly)', () => {
    fc.assert(
      fc.property(fc.array(cells, { minLength: 1, maxLength: 5 }), (rows) => {
        const width = rows[0]!.length;
        const table = rows.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
        const text = table.map((r) => csvRow(r, false)).join('');
        const back = parse(text, { relax_column_count: false, record_delimiter: '\r\n' }) as string[][];
        expect(back).toEqual(table);
      }),
      { numRuns: RUNS },
    );
  });

  it("with the guard on, a cell a spreadsheet would run comes back with a leading ' and nothing else changed", () => {
    fc.assert(
      fc.property(cells, (row) => {
        const [back] = parse(csvRow(row, true), { record_delimiter: '\r\n' }) as string[][];
        back!.forEach((cell, i) => {
          const original = row[i]!;
          // The documented rule: = + - @ (or a look-alike) first, after any white space or
          // invisible characters, or a tab or CR first.
          const runs = /^(?:[\t\r]|[\s\p{Default_Ignorable_Code_Point}]*[=+\-@＝＋－＠﹦﹢﹣﹫−])/u;
          expect(cell).toBe(runs.test(original) ? `'${original}` : original);
          expect(cell).not.toMatch(/^[=+\-@\t\r]/);
        });
      }),
      { numRuns: RUNS },
    );
  });
});

describe('URL joiner and query encoder', () => {
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
          fc.oneof(fc.string({ unit: 'binary' }), fc.array(fc.string(), { minLength: 1, maxLength: 3 })),
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
        fc.array(fc.tuple(fc.string({ unit: 'binary', minLength: 1 }), fc.string({ unit: 'binary' })), {
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
