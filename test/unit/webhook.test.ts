import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CaptureError, decodeChunked, headerOf, parseCapture } from '../../src/webhook/capture.js';
import { checkEvent } from '../../src/webhook/events.js';
import { type Secret, secretKey } from '../../src/webhook/secret.js';
import {
  computeDigest,
  DEFAULT_HEADERS,
  encodeDigest,
  signatureHeaderValue,
  v1Values,
} from '../../src/webhook/sign.js';
import { describeAge, verifyDelivery } from '../../src/webhook/verify.js';
import { AUTO_BOOK_EVENT } from '../webhook-fixture.js';
import '../reliability.js';

// Known vectors, computed independently with openssl (`openssl dgst -sha256 -hmac …`).
const BODY =
  '{"event_id":"9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a","event_name":"visit.status_changed","status":"booked","changes":{"status":["ready_to_book","booked"]},"visit_id":"1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10","occurred_at":"2026-11-21T19:00:00Z","referral":{"id":"3212c76a-c27e-4ca2-9e90-bb9c865c1630","reference":"R-240001","visits":[{"id":"1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10","status":"booked"}]}}';
const VECTORS = [
  {
    secret: 'test_secret_123',
    format: 'raw' as const,
    ts: '1763751600',
    body: Buffer.from(BODY),
    hex: 'd91405a243542a356d32004f40c2fc3fb50980c5b1f2c9ddcae779893a4ea333',
    base64: '2RQFokNUKjVtMgBPQML8P7UJgMWx8sndyud5iTpOozM=',
  },
  {
    secret: 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
    format: 'base64' as const,
    ts: '1700000000',
    body: Buffer.from('{"event_name":"visit.status_changed"}'),
    hex: '97fa64c50407cf74d4f1f964fd058651a0203819fb33f1e45dd472b3f66bb430',
    base64: 'l/pkxQQHz3TU8flk/QWGUaAgOBn7M/HkXdRys/ZrtDA=',
  },
  {
    secret: 'sécret',
    format: 'raw' as const,
    ts: '1700000000',
    body: Buffer.from([0x00, 0xff, 0xfe, ...Buffer.from(' binary\r\n')]),
    hex: 'be7db546a97760c6e55483fbbfa2e2051044e13a8c6b9dd2fbe800d4b43bb282',
    base64: undefined,
  },
];

const secretOf = (text: string, format: 'raw' | 'base64' = 'raw'): Secret => ({
  key: secretKey(text, format),
  text,
  format,
  source: 'test',
  warnings: [],
});

const NOW = 1763751600 + 12;
const verify = (
  headers: Array<[string, string]>,
  body: Buffer,
  extra: Partial<Parameters<typeof verifyDelivery>[0]> = {},
) =>
  verifyDelivery({
    headers,
    body,
    secret: secretOf('test_secret_123'),
    encoding: 'auto',
    now: NOW,
    names: { ...DEFAULT_HEADERS },
    allowUnsigned: false,
    ...extra,
  });
const signed = (
  body: string | Buffer,
  ts = '1763751600',
  enc: 'hex' | 'base64' = 'hex',
  secret = 'test_secret_123',
) => {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return {
    body: b,
    headers: [
      ['X-Service-Event', 'visit.status_changed'],
      ['X-Service-Timestamp', ts],
      ['X-Service-Signature', signatureHeaderValue(Buffer.from(secret), ts, b, enc)],
    ] as Array<[string, string]>,
  };
};

describe('signing: known vectors', () => {
  it.each(VECTORS)('$secret / $ts', (v) => {
    const digest = computeDigest(secretKey(v.secret, v.format), v.ts, v.body);
    expect(encodeDigest(digest, 'hex')).toBe(v.hex);
    if (v.base64) expect(encodeDigest(digest, 'base64')).toBe(v.base64);
  });
});

describe('verifyDelivery', () => {
  it('accepts the known vector in hex and in base64, naming the encoding', () => {
    const hex = verify(
      [
        ['x-service-event', 'visit.status_changed'],
        ['X-SERVICE-TIMESTAMP', '1763751600'],
        ['X-Service-Signature', `v1=${VECTORS[0]!.hex}`],
      ],
      Buffer.from(BODY),
    );
    expect(hex).toMatchObject({
      valid: true,
      encoding: 'hex',
      age_seconds: 12,
      event_id: '9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a',
    });
    expect(hex.headline).toBe('signature valid (hex), timestamp 12 s old');
    const b64 = verify(
      [
        ['X-Service-Event', 'visit.status_changed'],
        ['X-Service-Timestamp', '1763751600'],
        ['X-Service-Signature', `v1=${VECTORS[0]!.base64}`],
      ],
      Buffer.from(BODY),
    );
    expect(b64).toMatchObject({ valid: true, encoding: 'base64' });
  });

  it('passes when any of several v1= values matches (secret rotation), space- or comma-separated', () => {
    const { body, headers } = signed(BODY);
    const good = headers[2]![1];
    for (const joined of [
      `v1=${'0'.repeat(64)} ${good}`,
      `${good},v1=abc`,
      `v0=zzz, v1=${'f'.repeat(64)}, ${good}`,
    ]) {
      const h = headers.slice(0, 2).concat([['X-Service-Signature', joined]]);
      expect(verify(h, body).signature).toBe('valid');
    }
    expect(v1Values('v1=a v1=b,v1=c , v0=d')).toEqual(['a', 'b', 'c']);
  });

  it('reports signature and timestamp separately: valid signature, but too old', () => {
    const { body, headers } = signed(BODY, String(NOW - 3 * 86_400));
    const v = verify(headers, body, { tolerance: 300 });
    expect(v.valid).toBe(false);
    expect(v.signature).toBe('valid');
    expect(v.headline).toBe('signature valid (hex), but timestamp 3 days old, beyond --tolerance 300 s');
    expect(verify(headers, body).valid).toBe(true); // without --tolerance age is reported, not failed
  });

  it('fails a timestamp in the future beyond the tolerance, and a non-numeric one', () => {
    const future = signed(BODY, String(NOW + 900));
    expect(verify(future.headers, future.body, { tolerance: 300 }).problems[0]).toBe(
      'the timestamp is 15 min in the future, beyond --tolerance 300 s',
    );
    const text = signed(BODY, '2026-11-21T19:00:00Z');
    expect(verify(text.headers, text.body).problems).toContain(
      'the timestamp "2026-11-21T19:00:00Z" is not a whole number of seconds',
    );
  });

  it('names the likely cause: a re-indented body', () => {
    const { headers } = signed(BODY);
    const v = verify(headers, Buffer.from(JSON.stringify(JSON.parse(BODY), null, 2)));
    expect(v.causes[0]).toMatch(/re-serialised: the signature matches its compact JSON form/);
  });

  it('names the likely cause: changed line endings, and a newline added at the end', () => {
    const original = '{"event_name":"visit.status_changed",\n"x":1}';
    const { headers } = signed(original);
    expect(verify(headers, Buffer.from(original.replace(/\n/g, '\r\n'))).causes[0]).toMatch(
      /line endings in the body were changed/,
    );
    expect(verify(headers, Buffer.from(`${original}\n`)).causes[0]).toMatch(/newline was added at the end/);
  });

  it('names the likely cause: stray white space in the secret, or a base64 secret read as text', () => {
    const { body, headers } = signed(BODY);
    const ws = verify(headers, body, { secret: secretOf('test_secret_123 ') });
    expect(ws.causes[0]).toMatch(/stray white space/);
    const b64 = VECTORS[1]!;
    const h: Array<[string, string]> = [
      ['X-Service-Event', 'visit.status_changed'],
      ['X-Service-Timestamp', b64.ts],
      ['X-Service-Signature', `v1=${b64.hex}`],
    ];
    expect(verify(h, b64.body, { secret: secretOf(b64.secret, 'raw') }).causes[0]).toMatch(
      /--secret-format base64/,
    );
    expect(verify(h, b64.body, { secret: secretOf(b64.secret, 'base64') }).signature).toBe('valid');
  });

  it('says the secret is wrong when nothing else explains the mismatch', () => {
    const { body, headers } = signed(BODY);
    const v = verify(headers, body, { secret: secretOf('another-secret') });
    expect(v.valid).toBe(false);
    expect(v.causes[0]).toMatch(/the secret is wrong/);
  });

  it('with --encoding hex, a base64 signature fails and says why', () => {
    const { body, headers } = signed(BODY, '1763751600', 'base64');
    const v = verify(headers, body, { encoding: 'hex' });
    expect(v.signature).toBe('invalid');
    expect(v.causes[0]).toMatch(/not hex: it matches in the other encoding/);
  });

  it('treats an unsigned delivery as exit-8 material, except auto-book with --allow-unsigned', () => {
    const auto = Buffer.from(JSON.stringify(AUTO_BOOK_EVENT));
    const h: Array<[string, string]> = [['X-Service-Event', 'referral.auto_book_completed']];
    const plain = verify(h, auto);
    expect(plain.valid).toBe(false);
    expect(plain.causes[0]).toMatch(/unsigned by design; --allow-unsigned accepts exactly that case/);
    expect(verify(h, auto, { allowUnsigned: true })).toMatchObject({ valid: true, signature: 'unsigned' });
    const visit = verify([['X-Service-Event', 'visit.status_changed']], Buffer.from(BODY), {
      allowUnsigned: true,
    });
    expect(visit.valid).toBe(false);
    expect(visit.causes[0]).toMatch(/should have been signed/);
  });

  it('points at renamed headers when the real ones have other names', () => {
    const { body, headers } = signed(BODY);
    const renamed = headers.map(([k, v]) => [k.replace('X-Service', 'X-Imaging'), v] as [string, string]);
    const v = verify(renamed, body);
    expect(v.causes.join(' ')).toMatch(/X-Imaging-(Timestamp|Signature).*--signature-header/);
    const ok = verify(renamed, body, {
      names: { event: 'X-Imaging-Event', timestamp: 'X-Imaging-Timestamp', signature: 'X-Imaging-Signature' },
    });
    expect(ok.valid).toBe(true);
  });
});

describe('event shape checks', () => {
  const base = JSON.parse(BODY);
  const problemsOf = (body: unknown, header = 'visit.status_changed') =>
    checkEvent(header, Buffer.from(JSON.stringify(body))).problems;
  it('accepts the spec shape and unknown status strings', () => {
    expect(problemsOf(base)).toEqual([]);
    expect(
      problemsOf({ ...base, status: 'teleported', changes: { status: ['booked', 'teleported'] } }),
    ).toEqual([]);
  });
  it('requires exactly two items in changes.status', () => {
    expect(problemsOf({ ...base, changes: { status: ['a', 'b', 'booked'] } })).toContain(
      'changes.status has 3 items; it must have exactly 2 [previous, current]',
    );
  });
  it('checks the header against event_name and required fields with their types', () => {
    expect(problemsOf(base, 'notification.status_changed')).toContain(
      'the event header says "notification.status_changed" but event_name is "visit.status_changed"',
    );
    const { visit_id: _v, ...noVisit } = base;
    expect(problemsOf(noVisit)).toContain('visit_id is missing');
    expect(problemsOf({ ...base, event_id: 42 })).toContain('event_id is not a UUID');
    expect(problemsOf({ ...base, occurred_at: 'yesterday' })).toContain('occurred_at is not a date-time');
  });
  it('allows a null previous status for notifications', () => {
    const n = {
      event_id: '1b1e4c1b-8a7f-4e2d-9c3b-1a2b3c4d5e6f',
      event_name: 'notification.status_changed',
      referral_id: '2b1e4c1b-8a7f-4e2d-9c3b-1a2b3c4d5e6f',
      status: 'pending',
      changes: { status: [null, 'pending'] },
      notification: { id: 'x', channel: 'sms', status: 'pending', created_at: 'x', updated_at: 'x' },
      occurred_at: '2026-11-21T19:00:00Z',
    };
    expect(problemsOf(n, 'notification.status_changed')).toEqual([]);
  });
});

describe('parseCapture', () => {
  const body = Buffer.from('{"a":"é"}\r\n');
  const head = (eol: string, extra = '') =>
    [`POST /hook HTTP/1.1`, 'Host: x', 'content-type: application/json', `X-Service-Timestamp: 1`, extra]
      .filter(Boolean)
      .join(eol) +
    eol +
    eol;

  it('reads CRLF and LF captures, case-insensitively, cutting the body at Content-Length', () => {
    const crlf = parseCapture(
      Buffer.concat([
        Buffer.from(head('\r\n', `Content-Length: ${body.length}`)),
        body,
        Buffer.from('\r\n\r\n'),
      ]),
    );
    expect(crlf.body).toEqual(body);
    expect(crlf.method).toBe('POST');
    expect(headerOf(crlf.headers, 'x-service-timestamp')).toBe('1');
    expect(crlf.notes).toEqual([]);
    const lf = parseCapture(Buffer.concat([Buffer.from(head('\n', `Content-Length: ${body.length}`)), body]));
    expect(lf.body).toEqual(body);
    expect(lf.notes[0]).toMatch(/LF, not CRLF/);
  });

  it('decodes chunked transfer encoding', () => {
    const chunked = Buffer.concat([
      Buffer.from(head('\r\n', 'Transfer-Encoding: chunked')),
      Buffer.from('4\r\n{"a"\r\n'),
      Buffer.from(`${(body.length - 4).toString(16)};ext=1\r\n`),
      body.subarray(4),
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
    expect(parseCapture(chunked).body).toEqual(body);
    expect(() => decodeChunked(Buffer.from('zz\r\n'))).toThrow(/bad chunk size/);
  });

  it('keeps the body bytes exactly, binary included, and says when it is short', () => {
    const bin = Buffer.from([0x7b, 0x00, 0xff, 0x0d, 0x0a, 0x0a, 0x7d]);
    const c = parseCapture(Buffer.concat([Buffer.from(head('\r\n', 'Content-Length: 9')), bin]));
    expect(c.body).toEqual(bin);
    expect(c.notes[0]).toMatch(/shorter than its Content-Length 9/);
  });

  it('accepts headers without a request line, and joins repeated headers', () => {
    const c = parseCapture(Buffer.from('X-Service-Signature: v1=a\r\nX-Service-Signature: v1=b\r\n\r\n{}'));
    expect(headerOf(c.headers, 'x-service-signature')).toBe('v1=a, v1=b');
    expect(c.body.toString()).toBe('{}');
  });

  it('explains what it cannot read', () => {
    expect(() => parseCapture(Buffer.from(''))).toThrow(/empty/);
    expect(() => parseCapture(Buffer.from('POST / HTTP/1.1\r\nHost: x\r\n'))).toThrow(/no blank line/);
    expect(() => parseCapture(Buffer.from('hello world\r\n\r\n'))).toThrow(
      /neither a request line nor a header/,
    );
  });
});

describe('properties (fast-check)', () => {
  const names = { ...DEFAULT_HEADERS };
  const arbSecret = fc.string({ minLength: 1, maxLength: 64 }).filter((s) => s.trim() === s && s.length > 0);
  const arbTs = fc.integer({ min: 0, max: 4_102_444_800 }).map(String);
  const run = (secret: string, ts: string, body: Uint8Array, sig: string) =>
    verifyDelivery({
      headers: [
        ['X-Service-Timestamp', ts],
        ['X-Service-Signature', sig],
      ],
      body: Buffer.from(body),
      secret: secretOf(secret),
      encoding: 'auto',
      now: Number(ts),
      names,
      allowUnsigned: false,
    });

  it('sign then verify succeeds for any body, secret and timestamp, in hex and base64', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2048 }),
        arbSecret,
        arbTs,
        fc.constantFrom('hex', 'base64'),
        (body, secret, ts, enc) => {
          const sig = signatureHeaderValue(
            Buffer.from(secret),
            ts,
            Buffer.from(body),
            enc as 'hex' | 'base64',
          );
          const v = run(secret, ts, body, sig);
          return v.signature === 'valid' && v.encoding === enc;
        },
      ),
      { numRuns: 300 },
    );
  });

  it('flipping any byte of the body, the timestamp or the signature fails', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        arbSecret,
        arbTs,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('body', 'timestamp', 'signature'),
        (body, secret, ts, pos, xor, where) => {
          const sig = signatureHeaderValue(Buffer.from(secret), ts, Buffer.from(body), 'hex');
          let b = Buffer.from(body);
          let t = ts;
          let s = sig;
          if (where === 'body') {
            b = Buffer.from(body);
            const i = pos % b.length;
            b[i] = (b[i]! ^ xor) & 0xff;
          } else if (where === 'timestamp') {
            const chars = [...t];
            const i = pos % chars.length;
            chars[i] = String.fromCharCode((chars[i]!.charCodeAt(0) ^ (xor & 0x7f || 1)) & 0x7f || 0x31);
            t = chars.join('');
            if (t === ts) return true;
          } else {
            const chars = [...s.slice(3)];
            const i = pos % chars.length;
            const flipped = chars[i] === 'a' ? 'b' : 'a';
            chars[i] = flipped;
            s = `v1=${chars.join('')}`;
          }
          const v = run(secret, t, b, s);
          return v.signature !== 'valid';
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('describeAge', () => {
  it.each([
    [12, '12 s old'],
    [600, '10 min old'],
    [3 * 86_400, '3 days old'],
    [-300, '5 min in the future'],
  ])('%i -> %s', (s, text) => {
    expect(describeAge(s)).toBe(text);
  });
});

describe('raw HTTP capture parser', () => {
  /** Hostile input, as properties (fast-check): the parsers and writers that meet outside data. */

  const RUNS = 400;

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
