import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signatureHeaderValue } from '../../../src/webhook/sign.js';
import { bothForms, expectUsageError, hasEscapes, piped, plain, widest } from '../../fake-io.js';
import { run } from '../../helpers.js';
import { AUTO_BOOK_EVENT, captureFixture, secretFileFixture, VISIT_EVENT } from '../../webhook-fixture.js';

const sf = secretFileFixture('whsec_command_verify');
const TS = 1_800_000_000;
const now = () => new Date((TS + 12) * 1000);

/** A captured delivery, signed by `webhook sign` itself. */
async function capture(name: string, tamper = false): Promise<string> {
  const text = JSON.stringify(VISIT_EVENT);
  const bodyFile = join(sf.dir.path, `${name}.json`);
  writeFileSync(bodyFile, text);
  const signed = await piped([
    'webhook',
    'sign',
    '--body',
    bodyFile,
    '--secret-file',
    sf.secretFile,
    '--timestamp',
    String(TS),
  ]);
  const headers = signed.stdout.trimEnd().split('\n');
  const sent = tamper ? text.replace('report_uploaded', 'complete') : text;
  const file = join(sf.dir.path, `${name}.http`);
  writeFileSync(
    file,
    [
      'POST /hooks HTTP/1.1',
      'Host: partner.example',
      'Content-Type: application/json',
      ...headers,
      `Content-Length: ${Buffer.byteLength(sent)}`,
      '',
      sent,
    ].join('\r\n'),
  );
  return file;
}

describe('imaging webhook verify', () => {
  it('a good delivery: a one-line verdict and the event summary, exit 0, in both forms', async () => {
    const file = await capture('good');
    const { terminal, piped: p } = await bothForms(
      ['webhook', 'verify', '--request', file, '--secret-file', sf.secretFile],
      {
        deps: { now },
      },
    );
    expect(p.code, p.stderr).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    expect(p.stdout).toBe(
      'valid: signature valid (hex), timestamp 12 s old\n' +
        '  visit.status_changed  event 9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a  visit 1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10  referral R-240001  sent_to_rad -> report_uploaded\n',
    );
    expect(terminal.code).toBe(0);
    expect(plain(terminal.stdout)).toMatch(/^valid: signature valid \(hex\), timestamp 12 s old\n/);
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(terminal.stdout + terminal.stderr + p.stdout + p.stderr).not.toContain('whsec_command_verify');
  });

  it('a changed body fails with exit 8, and says so as JSON too', async () => {
    const file = await capture('tampered', true);
    const r = await piped(['webhook', 'verify', '--request', file, '--secret-file', sf.secretFile], {
      deps: { now },
    });
    expect(r.code).toBe(8);
    expect(r.stdout).toMatch(/^NOT valid: signature does not match \(timestamp 12 s old\)\n/);
    expect(r.stdout).toContain('  - the signature does not match\n');
    const json = await piped(
      ['webhook', 'verify', '--request', file, '--secret-file', sf.secretFile, '--json'],
      {
        deps: { now },
      },
    );
    expect(json.code).toBe(8);
    expect(JSON.parse(json.stdout).valid).toBe(false);
  });

  it('needs a delivery, and --header only with --body', async () => {
    expectUsageError(
      await piped(['webhook', 'verify', '--secret-file', sf.secretFile]),
      /give the delivery with --request FILE/,
      0,
    );
    const file = await capture('h');
    expectUsageError(
      await piped([
        'webhook',
        'verify',
        '--request',
        file,
        '--header',
        'X: y',
        '--secret-file',
        sf.secretFile,
      ]),
      /--header goes with --body/,
      0,
    );
    expectUsageError(
      await piped([
        'webhook',
        'verify',
        '--request',
        file,
        '--tolerance',
        'soon',
        '--secret-file',
        sf.secretFile,
      ]),
      /--tolerance/,
      0,
    );
  });
});

describe('webhook verify', () => {
  /** webhook verify and `imaging api` edge cases, each recreated for real. */

  const SECRET = 'whsec_edge_SECRET_1b2c3d';

  const NOW = new Date('2026-11-21T19:00:12Z');

  const NOW_S = Math.floor(NOW.getTime() / 1000);

  const now = () => NOW;

  const files = secretFileFixture(SECRET);

  const EVENT = VISIT_EVENT;

  const file = (name: string, data: Buffer | string) => {
    const p = join(files.dir.path, name);
    writeFileSync(p, data);
    return p;
  };

  const verifyBody = (body: Buffer, ts: number, extra: string[] = []) =>
    run(
      [
        'webhook',
        'verify',
        '--body',
        file(`body-${ts}`, body),
        '--secret-file',
        files.secretFile,
        '--header',
        'X-Service-Event: visit.status_changed',
        '--header',
        `X-Service-Timestamp: ${ts}`,
        '--header',
        `X-Service-Signature: ${signatureHeaderValue(Buffer.from(SECRET), String(ts), body, 'hex')}`,
        ...extra,
      ],
      { deps: { now } },
    );

  it('a body with a UTF-8 BOM and a valid signature: valid, the bytes verified, the BOM noted', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(EVENT))]);
    const r = await verifyBody(body, NOW_S - 12);
    expect(r.stdout).not.toContain('not valid JSON');
    expect(r.stdout).toMatch(/^valid: signature valid \(hex\)/);
    expect(r.stderr).toContain('warning: the body starts with a UTF-8 byte order mark (BOM');
    expect(r.code).toBe(0);
  });

  it('two Content-Length headers that disagree: refused as ambiguous (exit 2)', async () => {
    const body = Buffer.from(JSON.stringify(EVENT));
    const ts = String(NOW_S - 12);
    const head = (lengths: number[]) =>
      [
        'POST /hook HTTP/1.1',
        'X-Service-Event: visit.status_changed',
        `X-Service-Timestamp: ${ts}`,
        `X-Service-Signature: ${signatureHeaderValue(Buffer.from(SECRET), ts, body, 'hex')}`,
        ...lengths.map((n) => `Content-Length: ${n}`),
        '',
        '',
      ].join('\r\n');
    const args = (name: string) => [
      'webhook',
      'verify',
      '--request',
      name,
      '--secret-file',
      files.secretFile,
    ];
    const bad = await run(
      args(file('two-lengths.http', Buffer.concat([Buffer.from(head([10, body.length])), body]))),
      {
        deps: { now },
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: --request: Content-Length is ambiguous: the capture gives "10" and');
    const same = await run(
      args(file('same-lengths.http', Buffer.concat([Buffer.from(head([body.length, body.length])), body]))),
      { deps: { now } },
    );
    expect(same.stdout).toMatch(/^valid/);
    expect(same.code).toBe(0);
  });

  it('without --tolerance, a timestamp from 1970 stays valid but is warned about', async () => {
    const body = Buffer.from(JSON.stringify(EVENT));
    const old = await verifyBody(body, 1);
    expect(old.code).toBe(0);
    expect(old.stdout).toMatch(/^valid/);
    expect(old.stderr).toMatch(
      /warning: the timestamp is \d+ days old, older than 5 minutes: a receiver would refuse it/,
    );
    const future = await verifyBody(body, NOW_S + 3600);
    expect(future.code).toBe(0);
    expect(future.stderr).toContain('warning: the timestamp is 60 min in the future');
    const fresh = await verifyBody(body, NOW_S - 12);
    expect(fresh.stderr).toBe('');
    const strict = await verifyBody(body, 1, ['--tolerance', '300']);
    expect(strict.code).toBe(8);
  });
});

describe('webhook verify', () => {
  const { SECRET, TS, files, event, BODY, sig, capture, write, now } = captureFixture();

  it('verifies a captured request: exit 0, one-line verdict and the event summary', async () => {
    const r = await run(
      ['webhook', 'verify', '--request', write('ok.http', capture()), '--secret-file', files.secretFile],
      { deps: { now } },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'valid: signature valid (hex), timestamp 12 s old\n' +
        '  visit.status_changed  event 9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a  visit 1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10  referral R-240001  sent_to_rad -> report_uploaded\n',
    );
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('prints the documented JSON verdict', async () => {
    const r = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('ok2.http', capture()),
        '--secret-file',
        files.secretFile,
        '--json',
      ],
      {
        deps: { now },
      },
    );
    expect(JSON.parse(r.stdout)).toMatchObject({
      valid: true,
      encoding: 'hex',
      event: 'visit.status_changed',
      event_id: event.event_id,
      timestamp: Number(TS),
      age_seconds: 12,
      problems: [],
    });
  });

  it('takes --body with --header, and the secret from IMAGING_WEBHOOK_SECRET', async () => {
    const r = await run(
      [
        'webhook',
        'verify',
        '--body',
        write('body.json', BODY),
        '--header',
        'x-service-event: visit.status_changed',
        '--header',
        `X-Service-Timestamp: ${TS}`,
        '--header',
        `X-Service-Signature: ${sig()}`,
      ],
      { env: { IMAGING_WEBHOOK_SECRET: SECRET }, deps: { now } },
    );
    expect(r.code).toBe(0);
  });

  it('reads the capture from stdin', async () => {
    const r = await run(['webhook', 'verify', '--request', '-', '--secret-file', files.secretFile], {
      stdin: capture(),
      deps: { now },
    });
    expect(r.code).toBe(0);
  });

  it('fails with exit 8 and the likely cause: one byte changed, wrong secret, old timestamp, re-indented body', async () => {
    const changed = Buffer.from(BODY);
    changed[BODY.indexOf('R-240001') + 2] = '3'.charCodeAt(0);
    const oneByte = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('b.http', capture(changed, TS, sig())),
        '--secret-file',
        files.secretFile,
      ],
      { deps: { now } },
    );
    expect(oneByte.code).toBe(8);
    expect(oneByte.stdout).toMatch(/^NOT valid: signature does not match/);

    const wrong = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('w.http', capture(BODY, TS, sig(BODY, TS, 'other'))),
        '--secret-file',
        files.secretFile,
      ],
      {
        deps: { now },
      },
    );
    expect(wrong.code).toBe(8);
    expect(wrong.stdout).toContain('likely cause: the secret is wrong');

    const oldTs = String(Number(TS) - 3 * 86_400);
    const old = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('o.http', capture(BODY, oldTs)),
        '--secret-file',
        files.secretFile,
        '--tolerance',
        '300',
      ],
      { deps: { now } },
    );
    expect(old.code).toBe(8);
    expect(old.stdout).toMatch(
      /^NOT valid: signature valid \(hex\), but timestamp 3 days old, beyond --tolerance 300 s/,
    );

    const pretty = Buffer.from(JSON.stringify(event, null, 2));
    const indented = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('i.http', capture(pretty, TS, sig())),
        '--secret-file',
        files.secretFile,
      ],
      {
        deps: { now },
      },
    );
    expect(indented.code).toBe(8);
    expect(indented.stdout).toContain('likely cause: the body was re-serialised');
  });

  it('names changed line endings in an LF capture whose body was converted too', async () => {
    const multi = Buffer.from(`${JSON.stringify(event, null, 1).replace(/\n/g, '\r\n')}`);
    const lfBody = Buffer.from(multi.toString().replace(/\r\n/g, '\n'));
    const r = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('lf.http', capture(lfBody, TS, sig(multi), '\n')),
        '--secret-file',
        files.secretFile,
      ],
      {
        deps: { now },
      },
    );
    expect(r.code).toBe(8);
    expect(r.stdout).toContain('line endings in the body were changed from CRLF to LF');
  });

  it('drops a secret file\u2019s trailing newline, and warns of other white space', async () => {
    const spaced = write('spaced.txt', ` ${SECRET}\n`);
    const r = await run(
      ['webhook', 'verify', '--request', write('s.http', capture()), '--secret-file', spaced],
      { deps: { now } },
    );
    expect(r.code).toBe(8);
    expect(r.stderr).toContain('warning: the secret from --secret-file starts with white space');
    expect(r.stdout).toContain('likely cause: the secret has stray white space');
  });

  it('accepts a base64 secret with a whsec_ prefix', async () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const body = BODY;
    const signature = signatureHeaderValue(key, TS, body, 'base64');
    const r = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('b64.http', capture(body, TS, signature)),
        '--secret-format',
        'base64',
      ],
      { env: { IMAGING_WEBHOOK_SECRET: `whsec_${key.toString('base64')}` }, deps: { now } },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('signature valid (base64)');
  });

  it('asks for the secret on a terminal, and refuses (exit 2) with no secret and no terminal', async () => {
    const asked = await run(['webhook', 'verify', '--request', write('t.http', capture())], {
      stdinIsTTY: true,
      deps: { now, prompter: { secret: async () => SECRET, confirm: async () => true } },
    });
    expect(asked.code).toBe(0);
    const none = await run(['webhook', 'verify', '--request', write('n.http', capture())], { deps: { now } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no webhook signing secret');
  });

  it('renames headers with --event-header / --timestamp-header / --signature-header', async () => {
    const raw = capture()
      .toString('latin1')
      .replace(/X-Service-/g, 'X-Acme-');
    const r = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('acme.http', Buffer.from(raw, 'latin1')),
        '--secret-file',
        files.secretFile,
        '--event-header',
        'x-acme-event',
        '--timestamp-header',
        'X-Acme-Timestamp',
        '--signature-header',
        'X-ACME-SIGNATURE',
      ],
      { deps: { now } },
    );
    expect(r.code).toBe(0);
  });

  it('reports an unsigned delivery (exit 8), and --allow-unsigned accepts only auto-book', async () => {
    const auto = Buffer.from(JSON.stringify(AUTO_BOOK_EVENT));
    const file = write(
      'auto.http',
      Buffer.concat([
        Buffer.from('POST / HTTP/1.1\r\nX-Service-Event: referral.auto_book_completed\r\n\r\n'),
        auto,
      ]),
    );
    const plain = await run(['webhook', 'verify', '--request', file, '--secret-file', files.secretFile], {
      deps: { now },
    });
    expect(plain.code).toBe(8);
    expect(plain.stdout).toContain('unsigned by design; --allow-unsigned accepts exactly that case');
    const allowed = await run(
      ['webhook', 'verify', '--request', file, '--secret-file', files.secretFile, '--allow-unsigned'],
      { deps: { now } },
    );
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('outcome booked  referral R-240001');
  });

  it.each([
    [[], /give the delivery with --request/],
    [['--request', 'x', '--body', 'y'], /give the delivery with --request/],
    [['--request', '/nonexistent/capture.http'], /cannot read \/nonexistent\/capture.http: no such file/],
    [['--body', '-', '--encoding', 'hex2'], /unknown encoding "hex2"/],
    [['--body', '-', '--tolerance', '5m'], /--tolerance must be a whole number of seconds/],
    [['--body', '-', '--header', 'no colon'], /expected "Name: value"/],
    [['--body', '-', '--secret', 'x'], /the webhook secret is never given as a flag/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const r = await run(['webhook', 'verify', ...args], { env: { IMAGING_WEBHOOK_SECRET: SECRET } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('refuses a huge capture with a clear message', async () => {
    const big = write('big.http', Buffer.alloc(6 * 1024 * 1024, 0x41));
    const r = await run(['webhook', 'verify', '--request', big, '--secret-file', files.secretFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('larger than 5 MiB');
  });
});
