import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockServer } from '../../src/emulator/server.js';
import { signatureHeaderValue } from '../../src/webhook/sign.js';
import { BIN, json, run, testServer } from '../helpers.js';
import { secretFileFixture, VISIT_EVENT } from '../webhook-fixture.js';

const JSON_TYPE = { 'content-type': 'application/json' };

const SECRET = 'whsec_test_SECRET_value_9f8e7d';
const NOW = new Date('2026-11-21T19:00:12Z');
const TS = String(Math.floor(NOW.getTime() / 1000) - 12);

const files = secretFileFixture(SECRET);

const event = VISIT_EVENT;
const BODY = Buffer.from(JSON.stringify(event));
const sig = (body: Buffer = BODY, ts = TS, secret = SECRET) =>
  signatureHeaderValue(Buffer.from(secret), ts, body, 'hex');
const capture = (body: Buffer = BODY, ts = TS, signature = sig(body, ts), eol = '\r\n') =>
  Buffer.concat([
    Buffer.from(
      [
        'POST /webhooks/imaging HTTP/1.1',
        'Host: partner.example',
        'Content-Type: application/json',
        'User-Agent: Service-Webhook/1.0',
        'X-Service-Event: visit.status_changed',
        `X-Service-Timestamp: ${ts}`,
        `X-Service-Signature: ${signature}`,
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join(eol),
    ),
    body,
  ]);
const write = (name: string, data: Buffer | string) => {
  const p = join(files.dir.path, name);
  writeFileSync(p, data);
  return p;
};
const now = () => NOW;

describe('webhook verify', () => {
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
    const auto = Buffer.from(
      JSON.stringify({
        event_name: 'referral.auto_book_completed',
        occurred_at: '2026-11-21T19:00:00Z',
        auto_book_request: {
          id: '0d9e4c1b-8a7f-4e2d-9c3b-1a2b3c4d5e6f',
          status: 'completed',
          outcome: 'booked',
        },
        referral: { reference: 'R-240001' },
      }),
    );
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

describe('webhook sign', () => {
  it('prints the three headers', async () => {
    const r = await run([
      'webhook',
      'sign',
      '--body',
      write('sb.json', BODY),
      '--timestamp',
      TS,
      '--secret-file',
      files.secretFile,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `X-Service-Event: visit.status_changed\nX-Service-Timestamp: ${TS}\nX-Service-Signature: ${sig()}\n`,
    );
  });

  it('signs from stdin, with --event and base64, as JSON; the result verifies', async () => {
    const r = await run(
      ['webhook', 'sign', '--body', '-', '--event', 'visit.status_changed', '--encoding', 'base64', '--json'],
      {
        stdin: BODY,
        env: { IMAGING_WEBHOOK_SECRET: SECRET },
        deps: { now },
      },
    );
    const out = JSON.parse(r.stdout);
    expect(out.timestamp).toBe(String(NOW.getTime() / 1000));
    expect(out.signature).toBe(signatureHeaderValue(Buffer.from(SECRET), out.timestamp, BODY, 'base64'));
    const v = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('sv.http', capture(BODY, out.timestamp, out.signature)),
        '--secret-file',
        files.secretFile,
      ],
      {
        deps: { now },
      },
    );
    expect(v.code).toBe(0);
  });

  it('prints a curl command that posts the exact body', async () => {
    const file = write("it's.json", BODY);
    const r = await run([
      'webhook',
      'sign',
      '--body',
      file,
      '--timestamp',
      TS,
      '--secret-file',
      files.secretFile,
      '--curl',
      'http://127.0.0.1:9/hook',
    ]);
    expect(r.stdout).toContain(`-H 'X-Service-Signature: ${sig()}'`);
    expect(r.stdout).toContain(`--data-binary @'${file.replace(/'/g, "'\\''")}'`);
  });

  it('needs an event name and a numeric timestamp', async () => {
    const noName = await run([
      'webhook',
      'sign',
      '--body',
      write('nn.json', '{"a":1}'),
      '--secret-file',
      files.secretFile,
    ]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('--event NAME');
    expect(
      (
        await run([
          'webhook',
          'sign',
          '--body',
          write('ts.json', BODY),
          '--timestamp',
          'now',
          '--secret-file',
          files.secretFile,
        ])
      ).code,
    ).toBe(2);
  });
});

describe('webhook listen', () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  /** Runs `webhook listen` in-process until the returned stop() (as Ctrl-C would). */
  const listen = async (args: string[]) => {
    const ac = new AbortController();
    const { fakeIO } = await import('../helpers.js');
    const fake = fakeIO();
    const { main } = await import('../../src/main.js');
    const done = main(['webhook', 'listen', '--port', '0', '--secret-file', files.secretFile, ...args], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    for (let i = 0; i < 100 && !url; i++) {
      url = /Listening for webhooks on (http:\/\/\S+)/.exec(fake.stderr())?.[1] ?? '';
      if (!url) await new Promise((r) => setTimeout(r, 20));
    }
    const { InterruptedError } = await import('../../src/errors.js');
    return {
      url,
      out: fake.stdout,
      err: fake.stderr,
      stop: async () => {
        ac.abort(new InterruptedError('SIGINT'));
        return done;
      },
    };
  };
  const post = (url: string, body: Buffer, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const signedHeaders = (body = BODY) => {
    const ts = String(Math.floor(Date.now() / 1000));
    return {
      'X-Service-Event': 'visit.status_changed',
      'X-Service-Timestamp': ts,
      'X-Service-Signature': sig(body, ts),
    };
  };

  it('answers 200 for a valid delivery and 400 with the reason for an invalid one; notes duplicates; stops with 130', async () => {
    const l = await listen([]);
    const ok = await post(l.url, BODY, signedHeaders());
    expect(ok.status).toBe(200);
    const again = await post(l.url, BODY, signedHeaders());
    expect(await again.json()).toMatchObject({ ok: true, duplicate: true });
    const bad = await post(l.url, BODY, {
      ...signedHeaders(),
      'X-Service-Signature': `v1=${'0'.repeat(64)}`,
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: string[] }).problems).toContain('the signature does not match');
    const code = await l.stop();
    expect(code).toBe(130);
    const lines = l.out().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ {2}valid {4}visit\.status_changed {2}event 9b2d8f3e/,
    );
    expect(lines[1]).toContain('(duplicate delivery)');
    expect(lines[2]).toMatch(
      /INVALID {2}visit\.status_changed {2}signature does not match \(timestamp \d+ s old\)/,
    );
    // Said once: the problem the headline already names is not repeated after it.
    expect(lines[2]!.match(/signature does not match/g)).toHaveLength(1);
    expect(l.err()).toContain('Stopped. 3 deliveries: 2 valid, 1 not valid, 1 duplicate.');
  });

  it('prints NDJSON with --json', async () => {
    const l = await listen(['--json']);
    await post(l.url, BODY, signedHeaders());
    await l.stop();
    expect(JSON.parse(l.out())).toMatchObject({
      valid: true,
      event: 'visit.status_changed',
      duplicate: false,
      response_status: 200,
    });
  });

  it('forwards the exact bytes and headers with --forward-to and reports the status', async () => {
    const target = await testServer((_req, res) => json(res, 202, { thanks: true }));
    servers.push(target);
    const l = await listen(['--forward-to', `${target.url}/partner/hook`, '--path', '/in']);
    const headers = signedHeaders();
    const res = await post(l.url, BODY, headers);
    expect(res.status).toBe(202);
    expect((await fetch(l.url.replace('/in', '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
    await l.stop();
    expect(target.seen).toHaveLength(1);
    expect(target.seen[0]!.url).toBe('/partner/hook');
    expect(target.seen[0]!.body).toBe(BODY.toString());
    expect(target.seen[0]!.headers['x-service-signature']).toBe(headers['X-Service-Signature']);
    expect(l.out()).toContain('-> 202');
  });

  it('--forward-to a target that answers 200 then streams forever: the sender still gets the 200', async () => {
    // A raw TCP target on 127.0.0.1: the head, then body bytes as fast as the socket takes them.
    const sockets = new Set<import('node:net').Socket>();
    const target = createNetServer((sock) => {
      sockets.add(sock);
      sock.on('error', () => {});
      sock.once('data', () => {
        sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n');
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = () => {
          while (!sock.destroyed && sock.write(chunk)) {}
        };
        sock.on('drain', pump);
        pump();
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
    servers.push({
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          target.close(() => resolve());
        }),
    });
    const port = (target.address() as import('node:net').AddressInfo).port;
    const l = await listen(['--forward-to', `http://127.0.0.1:${port}/hook`]);
    const res = await post(l.url, BODY, signedHeaders());
    expect(res.status).toBe(200);
    await l.stop();
    expect(l.out()).toContain('-> 200');
  });
});

describe('end to end: imaging mock sends, imaging webhook listen receives', () => {
  it('delivers signed visit, notification and auto-book events that verify', async () => {
    const listener = spawn(process.execPath, [BIN, 'webhook', 'listen', '--port', '0', '--json'], {
      env: { PATH: process.env.PATH, IMAGING_WEBHOOK_SECRET: SECRET },
    });
    let err = '';
    listener.stderr.on('data', (d) => (err += d));
    const lines: string[] = [];
    let buf = '';
    listener.stdout.on('data', (d) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      lines.push(...parts);
    });
    for (let i = 0; i < 200 && !/Listening for webhooks on/.test(err); i++)
      await new Promise((r) => setTimeout(r, 25));
    const url = /on (http:\/\/\S+)/.exec(err)![1]!;

    const mock = spawn(
      process.execPath,
      [BIN, 'mock', '--port', '0', '--webhook-url', `${url}hooks`, '--webhook-retry-ms', '50'],
      {
        env: { PATH: process.env.PATH, IMAGING_WEBHOOK_SECRET: SECRET },
      },
    );
    const mockUrl = await new Promise<string>((resolve) =>
      mock.stdout.once('data', (d) => resolve(String(d).trim())),
    );
    try {
      type Listed = { referrals: Array<{ id: string; visits: Array<{ id: string; status: string }> }> };
      const auth = { headers: { authorization: 'Bearer mock-token' } };
      const list = (await (await fetch(`${mockUrl}/api/v2/referrals?per_page=10`, auth)).json()) as Listed;
      const referral = list.referrals.find((r) => r.visits.length > 0)!;
      const visit = referral.visits[0]!;
      const adv = await fetch(`${mockUrl}/__mock/referrals/${referral.id}/visits/${visit.id}/advance`, {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ status: 'report_uploaded' }),
      });
      expect(adv.status).toBe(202);
      await fetch(`${mockUrl}/__mock/referrals/${referral.id}/notifications`, {
        method: 'POST',
        headers: JSON_TYPE,
      });
      await fetch(`${mockUrl}/__mock/referrals/${referral.id}/auto_book`, {
        method: 'POST',
        headers: JSON_TYPE,
      });
      for (let i = 0; i < 200 && lines.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
      const events = lines.map((l) => JSON.parse(l));
      // The emulator sends each delivery on its own connection as the event happens: they may
      // arrive in any order.
      expect(events.map((e) => e.event).sort()).toEqual([
        'notification.status_changed',
        'referral.auto_book_completed',
        'visit.status_changed',
      ]);
      expect(events.every((e) => e.valid && e.encoding === 'hex')).toBe(true);
      const got = (await (
        await fetch(`${mockUrl}/api/v2/referrals/${referral.id}`, auth)
      ).json()) as Listed['referrals'][0];
      expect(got.visits[0]!.status).toBe('report_uploaded');
    } finally {
      mock.kill('SIGTERM');
      listener.kill('SIGINT');
    }
  });

  it('retries a failed delivery with the same event_id', async () => {
    let calls = 0;
    const receiver = await testServer((_req, res) => {
      calls++;
      res.writeHead(calls < 3 ? 503 : 200).end();
    });
    const mock = await startMockServer({
      port: 0,
      webhookUrl: `${receiver.url}/hook`,
      webhookKey: Buffer.from(SECRET),
      webhookRetryDelayMs: 10,
    });
    try {
      const r = mock.referrals.at(1);
      const res = await fetch(`${mock.url}/__mock/referrals/${r.id}/visits/${r.visits[0]!.id}/advance`, {
        method: 'POST',
        headers: JSON_TYPE,
      });
      const { event_id } = (await res.json()) as { event_id: string };
      await mock.webhooks.idle();
      expect(receiver.seen).toHaveLength(3);
      expect(receiver.seen.map((s) => JSON.parse(s.body).event_id)).toEqual([event_id, event_id, event_id]);
      expect(mock.webhooks.log.map((d) => d.status)).toEqual([503, 503, 200]);
    } finally {
      await mock.close();
      await receiver.close();
    }
  });

  it('a delivery captured raw (as by nc -l) verifies, and one changed byte does not', async () => {
    const captured = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const raw = createNetServer((sock) => {
        sock.on('data', (d) => {
          chunks.push(d);
          const all = Buffer.concat(chunks);
          const head = all.indexOf('\r\n\r\n');
          const len = Number(/content-length: (\d+)/i.exec(all.toString('latin1'))?.[1] ?? -1);
          if (head >= 0 && all.length >= head + 4 + len) {
            sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
            raw.close();
            resolve(all);
          }
        });
      }).listen(0, '127.0.0.1', async () => {
        const port = (raw.address() as { port: number }).port;
        const mock = await startMockServer({
          port: 0,
          webhookUrl: `http://127.0.0.1:${port}/capture`,
          webhookKey: Buffer.from(SECRET),
        });
        const r = mock.referrals.at(2);
        await fetch(`${mock.url}/__mock/referrals/${r.id}/visits/${r.visits[0]!.id}/advance`, {
          method: 'POST',
          headers: JSON_TYPE,
        });
        await mock.webhooks.idle();
        await mock.close();
      });
    });
    const file = write('nc.http', captured);
    const ok = await run([
      'webhook',
      'verify',
      '--request',
      file,
      '--secret-file',
      files.secretFile,
      '--tolerance',
      '60',
    ]);
    expect(ok.code).toBe(0);
    const tampered = Buffer.from(captured);
    tampered[tampered.length - 5] = tampered[tampered.length - 5]! ^ 1;
    const bad = await run([
      'webhook',
      'verify',
      '--request',
      write('nc-bad.http', tampered),
      '--secret-file',
      files.secretFile,
    ]);
    expect(bad.code).toBe(8);
  });
});
