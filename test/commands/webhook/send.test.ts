import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped, plain } from '../../fake-io.js';
import { BIN, cli, run, spawnCli, testServer } from '../../helpers.js';
import { DRIPS, rawReceiver, secretFileFixture } from '../../webhook-fixture.js';
import '../../reliability.js';
import { applySet, sampleEvent } from '../../../src/webhook/sample.js';

const sf = secretFileFixture('whsec_command_send');
let receiver: Awaited<ReturnType<typeof testServer>>;
beforeAll(async () => {
  receiver = await testServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
afterAll(() => receiver.close());
const to = () => `${receiver.url}/hooks`;

describe('imaging webhook send', () => {
  it('delivers a signed event and prints one line: event, receiver, status and time, in both forms', async () => {
    receiver.seen.length = 0;
    const { terminal, piped: p } = await bothForms([
      'webhook',
      'send',
      'visit.status_changed',
      '--to',
      to(),
      '--secret-file',
      sf.secretFile,
    ]);
    expect(receiver.seen).toHaveLength(2);
    const line =
      /^delivered {2}visit\.status_changed {2}event [0-9a-f-]{36} {2}-> http:\/\/127\.0\.0\.1:\d+\/hooks {2}200 OK {2}in \d+ ms\n$/;
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    expect(p.stdout).toMatch(line);
    expect(terminal.code).toBe(0);
    // At 80 columns the line wraps between its parts, never inside one.
    expect(plain(terminal.stdout).replace(/\s+/g, ' ')).toMatch(
      /^delivered visit\.status_changed event [0-9a-f-]{36} -> http:\/\/127\.0\.0\.1:\d+\/hooks 200 OK in \d+ ms $/,
    );
    for (const seen of receiver.seen) {
      expect(seen.headers['x-service-event']).toBe('visit.status_changed');
      expect(String(seen.headers['x-service-signature'])).toMatch(/^v1=[0-9a-f]{64}$/);
    }
    expect(terminal.stdout + terminal.stderr + p.stdout + p.stderr).not.toContain('whsec_command_send');
  });

  it('reports each delivery as JSON, and --duplicate sends the same event twice', async () => {
    receiver.seen.length = 0;
    const r = await piped([
      'webhook',
      'send',
      'visit.status_changed',
      '--to',
      to(),
      '--duplicate',
      '--secret-file',
      sf.secretFile,
      '--format',
      'ndjson',
    ]);
    expect(r.code).toBe(0);
    const bodies = receiver.seen.map((s) => JSON.parse(s.body));
    expect(bodies).toHaveLength(2);
    expect(bodies[0].event_id).toBe(bodies[1].event_id);
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2);
  });

  it('--print writes the signed request and sends nothing', async () => {
    receiver.seen.length = 0;
    const r = await piped([
      'webhook',
      'send',
      'visit.status_changed',
      '--print',
      '--secret-file',
      sf.secretFile,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^POST \/ HTTP\/1\.1\r\nHost: 127\.0\.0\.1:4030\r\n/);
    expect(r.stdout).toMatch(/\r\nX-Service-Signature: v1=[0-9a-f]{64}\r\n/);
    expect(receiver.seen).toHaveLength(0);
  });

  it('refuses an unknown event, a URL with credentials, or --print with --duplicate, sending nothing', async () => {
    receiver.seen.length = 0;
    expectUsageError(
      await piped(['webhook', 'send', 'visit.changed', '--to', to()]),
      /unknown event "visit.changed"/,
      0,
    );
    expectUsageError(
      await piped([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        'http://u:p@127.0.0.1:9/',
        '--unsigned',
      ]),
      /--to: credentials in the URL are not allowed/,
      0,
    );
    expectUsageError(
      await piped(['webhook', 'send', 'visit.status_changed', '--print', '--duplicate', '--unsigned']),
      /pick one/,
      0,
    );
    expectUsageError(await piped(['webhook', 'send']), /missing required argument 'event'/, 0);
    expect(receiver.seen).toHaveLength(0);
  });
});

describe('webhook send', () => {
  /**
   * `imaging webhook send`: realistic events of the spec's shape, signed as the service signs (checked
   * here with node:crypto, not the tool's own signing code), POSTed to a receiver; its status and time
   * printed; --print writes the signed request; --duplicate sends one event_id twice. End to end into
   * the real binary's `webhook listen`.
   */
  const SECRET = 'whsec-send-test-7c1e';

  const sf = secretFileFixture(SECRET);

  const hmac = (ts: string, body: string) =>
    createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex');

  // The spec's Referral resource: every field the snapshot in a visit event must carry.
  const REFERRAL_FIELDS = [
    'id',
    'reference',
    'status',
    'line_of_business',
    'payment_type',
    'incident_state',
    'visits',
    'referring_provider',
    'provider',
    'law_firm',
    'practice',
    'icd10_codes',
    'patient',
    'call_notes',
    'documents',
    'answered_medical_questionnaire',
    'preferred_location',
    'scheduling_mode',
    'auto_book_request',
  ];

  describe('webhook send to a receiver', () => {
    const receiver = { server: undefined as unknown as Awaited<ReturnType<typeof testServer>>, status: 200 };
    beforeAll(async () => {
      receiver.server = await testServer((_req, res) => res.writeHead(receiver.status).end('ok'));
    });
    afterAll(() => receiver.server.close());
    const to = () => `${receiver.server.url}/hooks/imaging?src=test`;

    it('POSTs the event with the spec headers, signed over {timestamp}.{raw body} (hex)', async () => {
      receiver.server.seen.length = 0;
      const r = await run([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        to(),
        '--secret-file',
        sf.secretFile,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(receiver.server.seen).toHaveLength(1);
      const got = receiver.server.seen[0]!;
      expect(got.method).toBe('POST');
      expect(got.url).toBe('/hooks/imaging?src=test');
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['user-agent']).toBe('Service-Webhook/1.0');
      expect(got.headers['x-service-event']).toBe('visit.status_changed');
      const ts = String(got.headers['x-service-timestamp']);
      expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
      expect(got.headers['x-service-signature']).toBe(`v1=${hmac(ts, got.body)}`);
      const event = JSON.parse(got.body);
      expect(Object.keys(event)).toEqual([
        'event_id',
        'event_name',
        'status',
        'changes',
        'visit_id',
        'occurred_at',
        'referral',
      ]);
      expect(event.changes.status).toHaveLength(2);
      expect(event.changes.status[1]).toBe(event.status);
      expect(Object.keys(event.referral)).toEqual(REFERRAL_FIELDS);
      expect(event.referral.visits.some((v: { id: string }) => v.id === event.visit_id)).toBe(true);
      // The receiver's status and the time it took, through the sanitiser.
      expect(r.stdout).toMatch(
        new RegExp(
          `^delivered  visit\\.status_changed  event ${event.event_id}  -> .*/hooks/imaging\\?src=test  200 OK  in \\d+ ms\\n$`,
        ),
      );
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    });

    it('notification and auto-book events have their own shapes (auto-book has no event_id)', async () => {
      receiver.server.seen.length = 0;
      for (const e of ['notification.status_changed', 'referral.auto_book_completed']) {
        const r = await run(['webhook', 'send', e, '--to', to(), '--secret-file', sf.secretFile, '--json']);
        expect(r.code, r.stderr).toBe(0);
      }
      const [n, a] = receiver.server.seen.map((s) => JSON.parse(s.body));
      expect(Object.keys(n)).toEqual([
        'event_id',
        'event_name',
        'referral_id',
        'status',
        'changes',
        'notification',
        'occurred_at',
      ]);
      expect(Object.keys(n.notification)).toEqual([
        'id',
        'channel',
        'notification_type',
        'status',
        'created_at',
        'updated_at',
        'visit_id',
      ]);
      expect(Object.keys(a)).toEqual(['event_name', 'occurred_at', 'auto_book_request', 'referral']);
      expect(a.auto_book_request.status).toBe('completed');
      expect(a.referral.auto_book_request).toEqual(a.auto_book_request);
    });

    it('an event id changed by --set is reported as sent: a number, an object (its JSON, cleaned, in the table)', async () => {
      receiver.server.seen.length = 0;
      const send = (set: string, ...more: string[]) =>
        run(['webhook', 'send', 'visit.status_changed', '--to', to(), '--unsigned', '--set', set, ...more]);
      const table = await send('event_id=42');
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^delivered {2}visit\.status_changed {2}event 42 {2}-> /);
      const json = await send('event_id=42', '--json');
      expect(JSON.parse(json.stdout)[0].event_id).toBe(42);
      const nd = await send('event_id={"n":"\\u001b[31mred"}', '--format', 'ndjson');
      expect(JSON.parse(nd.stdout).event_id).toEqual({ n: '\u001b[31mred' });
      const hostile = await send('event_id={"n":"\\u001b[31mred"}');
      expect(hostile.stdout).not.toContain('\u001b');
      expect(hostile.stdout).toContain('event {"n":"');
      // What was sent is what was reported.
      expect(receiver.server.seen.map((x) => JSON.parse(x.body).event_id)).toEqual([
        42,
        42,
        { n: '\u001b[31mred' },
        { n: '\u001b[31mred' },
      ]);
      // The auto-book event's id is its request's: as sent too.
      const ab = await run([
        'webhook',
        'send',
        'referral.auto_book_completed',
        '--to',
        to(),
        '--unsigned',
        '--set',
        'auto_book_request.id=7',
        '--json',
      ]);
      expect(JSON.parse(ab.stdout)[0]).toMatchObject({ event_id: null, auto_book_request_id: 7 });
    });

    it('--set changes fields by dotted path with JSON values; status carries through the event', async () => {
      receiver.server.seen.length = 0;
      const r = await run([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        to(),
        '--secret-file',
        sf.secretFile,
        '--set',
        'status=report_uploaded',
        '--set',
        'referral.reference=R-999',
        '--set',
        'referral.visits.0.procedures.0.report_link=https://reports.example/1.pdf',
        '--set',
        'referral.payor={"id":"p1","name":"Acme Comp"}',
        '--set',
        'referral.wc_number=null',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const e = JSON.parse(receiver.server.seen[0]!.body);
      expect(e.status).toBe('report_uploaded');
      expect(e.changes.status[1]).toBe('report_uploaded');
      expect(e.referral.visits[0].status).toBe('report_uploaded');
      expect(e.referral.reference).toBe('R-999');
      expect(e.referral.visits[0].procedures[0].report_link).toBe('https://reports.example/1.pdf');
      expect(e.referral.payor).toEqual({ id: 'p1', name: 'Acme Comp' });
      expect(e.referral.wc_number).toBeNull();
      // Still signed over exactly the bytes sent.
      const h = receiver.server.seen[0]!.headers;
      expect(h['x-service-signature']).toBe(
        `v1=${hmac(String(h['x-service-timestamp']), receiver.server.seen[0]!.body)}`,
      );
    });

    it('an override that breaks the shape is sent as asked, with a warning', async () => {
      receiver.server.seen.length = 0;
      const r = await run([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        to(),
        '--secret-file',
        sf.secretFile,
        '--set',
        'changes.status=["booked"]',
      ]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/warning: after --set, changes.status has 1 item; it must have exactly 2/);
      expect(JSON.parse(receiver.server.seen[0]!.body).changes.status).toEqual(['booked']);
    });

    it('--duplicate sends the same event_id twice, each signed', async () => {
      receiver.server.seen.length = 0;
      const r = await run(
        ['webhook', 'send', 'notification.status_changed', '--to', to(), '--duplicate', '--format', 'ndjson'],
        {
          env: { IMAGING_WEBHOOK_SECRET: SECRET },
        },
      );
      expect(r.code, r.stderr).toBe(0);
      const [a, b] = receiver.server.seen;
      expect(b!.body).toBe(a!.body);
      for (const s of [a!, b!])
        expect(s.headers['x-service-signature']).toBe(
          `v1=${hmac(String(s.headers['x-service-timestamp']), s.body)}`,
        );
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => [l.delivery, l.status, l.event_id])).toEqual([
        [1, 200, JSON.parse(a!.body).event_id],
        [2, 200, JSON.parse(a!.body).event_id],
      ]);
    });

    it("a refusing receiver's reason follows its status: a JSON error, a text line (cleaned), never an HTML page", async () => {
      const bodies: Array<[string, string, RegExp]> = [
        [
          'application/json',
          '{"error":"signature mismatch: expected v1"}',
          /not a 2xx: signature mismatch: expected v1\n/,
        ],
        ['text/plain', '\n bad timestamp \u001b[2J\n', /not a 2xx: bad timestamp ␛\[2J\n/],
        ['text/html', '<html><body>Forbidden</body></html>', /not a 2xx\n/],
        // A receiver that echoes the signing secret: never printed.
        ['text/plain', `expected secret ${SECRET}`, /not a 2xx: expected secret \[redacted\]\n/],
      ];
      for (const [type, body, expected] of bodies) {
        const refusing = await testServer((_req, res) => {
          res.writeHead(403, { 'content-type': type });
          res.end(body);
        });
        try {
          const r = await run([
            'webhook',
            'send',
            'visit.status_changed',
            '--to',
            `${refusing.url}/h`,
            '--secret-file',
            sf.secretFile,
          ]);
          expect(r.code).toBe(1);
          expect(r.stderr).toMatch(expected);
          expect(hasEscapes(r.stderr)).toBe(false);
        } finally {
          await refusing.close();
        }
      }
    });

    it('a receiver that does not answer 2xx is exit 1, with the status', async () => {
      receiver.status = 500;
      try {
        const r = await run([
          'webhook',
          'send',
          'visit.status_changed',
          '--to',
          to(),
          '--secret-file',
          sf.secretFile,
        ]);
        expect(r.code).toBe(1);
        expect(r.stdout).toMatch(/^FAILED\s+visit\.status_changed .* 500 Internal Server Error {2}in \d+ ms/);
        expect(r.stderr).toMatch(/error: the receiver answered 500 Internal Server Error, not a 2xx/);
        expect(r.stderr).toMatch(/sends it again with the same event_id/);
      } finally {
        receiver.status = 200;
      }
    });
  });

  describe('hostile and absent receivers', () => {
    let raw: Server;
    let port = 0;
    let reply = '';
    beforeAll(async () => {
      raw = createServer((sock) => {
        sock.on('data', () => {});
        if (reply) sock.end(Buffer.from(reply, 'latin1'));
      });
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
      port = (raw.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((r) => raw.close(() => r())));

    it("the receiver's status text reaches the terminal only through the sanitiser", async () => {
      reply = 'HTTP/1.1 202 Acc\x9b31mepted\x1b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n';
      const r = await run([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        `http://127.0.0.1:${port}/`,
        '--secret-file',
        sf.secretFile,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/ 202 Acc.*epted/);
      expect(r.stdout).not.toMatch(/[\x1b\x9b]/);
    });

    it('a receiver that never answers is exit 1 after --timeout', async () => {
      reply = '';
      const r = await run([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        `http://127.0.0.1:${port}/`,
        '--secret-file',
        sf.secretFile,
        '--timeout',
        '300',
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no answer from http:\/\/127.0.0.1:\d+\/: no answer within 300 ms/);
    });

    it('nobody listening is exit 1 with a hint to start a receiver', async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
      const free = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const r = await run([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        `http://127.0.0.1:${free}/`,
        '--secret-file',
        sf.secretFile,
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/ECONNREFUSED/);
      expect(r.stderr).toMatch(/hint: Is the receiver running\? imaging webhook listen/);
    });
  });

  describe('--print and usage errors', () => {
    it('--print writes the signed request, which webhook verify accepts; nothing is sent', async () => {
      const p = await run([
        'webhook',
        'send',
        'referral.auto_book_completed',
        '--print',
        '--secret-file',
        sf.secretFile,
      ]);
      expect(p.code, p.stderr).toBe(0);
      const [head, body] = p.stdout.split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0]).toBe('POST / HTTP/1.1');
      expect(head).toContain('Host: 127.0.0.1:4030');
      expect(head).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
      const ts = /X-Service-Timestamp: (\d+)/.exec(head)![1]!;
      expect(head).toContain(`X-Service-Signature: v1=${hmac(ts, body)}`);
      const v = await run(['webhook', 'verify', '--request', '-', '--json'], {
        stdin: p.stdout,
        env: { IMAGING_WEBHOOK_SECRET: SECRET },
      });
      expect(v.code, v.stdout).toBe(0);
      expect(JSON.parse(v.stdout)).toMatchObject({
        valid: true,
        event: 'referral.auto_book_completed',
        problems: [],
      });
    });

    it('--unsigned leaves out the timestamp and signature (auto-book to a per-request URL)', async () => {
      const p = await run(['webhook', 'send', 'referral.auto_book_completed', '--print', '--unsigned']);
      expect(p.code, p.stderr).toBe(0);
      expect(p.stdout).not.toMatch(/X-Service-(Timestamp|Signature)/);
      expect(p.stdout).toContain('X-Service-Event: referral.auto_book_completed');
    });

    it.for([
      [['webhook', 'send', 'visit.changed', '--to', 'http://127.0.0.1:9/'], /unknown event "visit.changed"/],
      [['webhook', 'send', 'visit.status_changed'], /--to is required/],
      [['webhook', 'send', 'visit.status_changed', '--to', 'ftp://x'], /--to needs an http\(s\) URL/],
      [['webhook', 'send', 'visit.status_changed', '--print', '--duplicate'], /pick one/],
      [
        ['webhook', 'send', 'visit.status_changed', '--to', 'http://127.0.0.1:9/', '--set', 'status'],
        /expected KEY=VALUE/,
      ],
      [
        [
          'webhook',
          'send',
          'visit.status_changed',
          '--to',
          'http://127.0.0.1:9/',
          '--set',
          'referral.visits.x=1',
        ],
        /is a list; give an index/,
      ],
      [
        ['webhook', 'send', 'visit.status_changed', '--to', 'http://127.0.0.1:9/', '--set', 'status.x=1'],
        /status is string, not an object/,
      ],
      [
        ['webhook', 'send', 'visit.status_changed', '--to', 'http://127.0.0.1:9/', '--set', '__proto__.x=1'],
        /is not a field path/,
      ],
      [
        ['webhook', 'send', 'visit.status_changed', '--to', 'http://127.0.0.1:9/'],
        /no webhook signing secret/,
      ],
      [
        ['webhook', 'send', 'visit.status_changed', '--to', 'http://127.0.0.1:9/', '--secret', 'x'],
        /the webhook secret is never given as a flag/,
      ],
    ] as const)('%j is exit 2', async ([argv, message]) => {
      const r = await run([...argv]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    });

    it('applySet makes missing objects and refuses to index past the end', () => {
      const e = sampleEvent('visit.status_changed', new Date());
      applySet(e, 'referral.extra.deep', '"12"');
      expect((e.referral as { extra: unknown }).extra).toEqual({ deep: '12' });
      expect(() => applySet(e, 'referral.visits.5.status', 'x')).toThrow(
        /referral.visits has 1 item; index 5 is past the end/,
      );
    });
  });

  describe('end to end: webhook send into the real binary of webhook listen', () => {
    let listener: ChildProcessWithoutNullStreams | undefined;
    afterAll(() => {
      listener?.kill('SIGKILL');
    });

    it('every event verifies, and the duplicate is recognised as one', async () => {
      listener = spawn(
        process.execPath,
        [BIN, 'webhook', 'listen', '--port', '0', '--json', '--secret-file', sf.secretFile],
        {
          env: { PATH: process.env.PATH, IMAGING_CONFIG_DIR: process.env.IMAGING_CONFIG_DIR },
        },
      );
      const l = listener;
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        l.stderr.on('data', (d) => {
          err += d;
          const m = /on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        l.on('exit', () => reject(new Error(`listen exited: ${err}`)));
      });
      const lines: Array<Record<string, unknown>> = [];
      let buf = '';
      let want = 0;
      let wake = () => {};
      l.stdout.on('data', (d) => {
        buf += d;
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        lines.push(...parts.map((p) => JSON.parse(p)));
        if (lines.length >= want) wake();
      });
      const send = await spawnCli([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        url,
        '--duplicate',
        '--secret-file',
        sf.secretFile,
      ]);
      expect(send.exitCode, send.stderr).toBe(0);
      for (const e of ['notification.status_changed', 'referral.auto_book_completed']) {
        // The real sender above; the other events' signatures by the same code, in-process.
        const s = await cli(false, ['webhook', 'send', e, '--to', url, '--secret-file', sf.secretFile]);
        expect(s.exitCode, s.stderr).toBe(0);
        expect(s.stdout).toMatch(/^delivered {2}/);
      }
      want = 4;
      if (lines.length < want) await new Promise<void>((r) => (wake = r));
      expect(lines.map((x) => [x.event, x.valid, x.duplicate, x.problems])).toEqual([
        ['visit.status_changed', true, false, []],
        ['visit.status_changed', true, true, []],
        ['notification.status_changed', true, false, []],
        ['referral.auto_book_completed', true, false, []],
      ]);
      expect(lines[0]!.event_id).toBe(lines[1]!.event_id);
      expect(send.stdout.match(/200 OK {2}in \d+ ms/g)).toHaveLength(2);
      const exited = new Promise<number | null>((r) => l.on('exit', (code) => r(code)));
      l.kill('SIGINT');
      expect(await exited).toBe(130);
    });
  });

  /**
   * Hostile receivers, as raw TCP servers on 127.0.0.1 driving the real binary: a 200 whose body
   * never ends (fast, or a byte at a time) and a 200 whose body is cut short. The status is the
   * answer: it is reported as soon as the head arrives, the body is read only a little, then closed.
   */
  describe('webhook send and a receiver whose body misbehaves', () => {
    async function rawReceiver(onRequest: (socket: import('node:net').Socket) => void) {
      const sockets = new Set<import('node:net').Socket>();
      const server: Server = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => sockets.delete(socket));
        let seen = '';
        socket.on('data', (c) => {
          seen += c.toString('latin1');
          const head = seen.indexOf('\r\n\r\n');
          if (head < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
          if (seen.length - head - 4 < length) return;
          seen = '';
          onRequest(socket);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      const port = (server.address() as import('node:net').AddressInfo).port;
      return {
        url: `http://127.0.0.1:${port}/`,
        open: () => sockets.size,
        close: () =>
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy();
            server.close(() => resolve());
          }),
      };
    }
    // The real binary for the endless body (a process that ends: nothing of the connection keeps it);
    // the trickle and the short body in-process, each connection seen closed once the command is done.
    const send = (to: string, real: boolean, ...extra: string[]) =>
      cli(real, ['webhook', 'send', 'visit.status_changed', '--to', to, '--unsigned', ...extra]);

    it('a 200 that streams an endless body as fast as it can: reported 200 after at most 64 KiB, exit 0', async () => {
      const receiver = await rawReceiver((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n');
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = () => {
          while (!socket.destroyed && socket.write(chunk)) {}
        };
        socket.on('drain', pump);
        pump();
      });
      try {
        const r = await send(receiver.url, true, '--json');
        expect(r.exitCode, r.stderr).toBe(0);
        const [line] = JSON.parse(r.stdout);
        expect(line.status).toBe(200);
        expect(line.ok).toBe(true);
        expect(line.note).toMatch(/the body is longer than 65536 bytes; closed/);
      } finally {
        await receiver.close();
      }
    });

    it('a 200 that trickles one byte at a time forever: reported 200 within --timeout, not hung', async () => {
      const timers: NodeJS.Timeout[] = [];
      const receiver = await rawReceiver((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        timers.push(setInterval(() => socket.destroyed || socket.write('1\r\nx\r\n'), 20));
      });
      try {
        const started = Date.now();
        const r = await send(receiver.url, false, '--timeout', '400');
        expect(r.exitCode, r.stderr).toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(r.stdout).toMatch(
          /^delivered {2}visit\.status_changed .* 200 OK {2}in \d+ ms \(note: the body was still coming \d+ ms after the status/,
        );
        await expect.poll(() => receiver.open(), { timeout: 2000 }).toBe(0);
      } finally {
        for (const t of timers) clearInterval(t);
        await receiver.close();
      }
    });

    it('a 200 with Content-Length 10 and only 2 bytes: the 200 is reported, with the short body noted', async () => {
      const receiver = await rawReceiver((socket) => {
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok');
      });
      try {
        const r = await send(receiver.url, false);
        expect(r.exitCode, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/ 200 OK {2}in \d+ ms \(note: the body was cut short \(2 of 10 bytes\)\)$/m);
        expect(r.stderr).not.toMatch(/no answer/);
      } finally {
        await receiver.close();
      }
    });
  });

  /**
   * Renamed headers that collide (with each other, or with a header the request itself carries)
   * would send one header for another: send, sign, verify and listen refuse them (exit 2), and send
   * reaches no receiver. The real binary for send's first case (the refusal is the same argument
   * check in every command, before anything starts), the rest in-process.
   */
  describe('header names that collide are refused', () => {
    const cases = [
      [
        ['--event-header', 'content-TYPE'],
        /--event-header: "content-TYPE" is a header the HTTP request itself carries/,
      ],
      [
        ['--timestamp-header', 'Host'],
        /--timestamp-header: "Host" is a header the HTTP request itself carries/,
      ],
      [['--signature-header', 'Content-Length'], /--signature-header: "Content-Length" is a header/],
      [['--event-header', 'transfer-encoding'], /is a header the HTTP request itself carries/],
      [['--event-header', 'CONNECTION'], /is a header the HTTP request itself carries/],
      [
        ['--timestamp-header', 'X-A', '--signature-header', 'x-a'],
        /--signature-header and --timestamp-header are the same header/,
      ],
      [
        ['--event-header', 'x-service-timestamp'],
        /--timestamp-header and --event-header are the same header/,
      ],
    ] as const;
    const commands = [
      ['send', 'visit.status_changed', '--unsigned'],
      ['sign', '--body', '-'],
      ['verify', '--body', '-'],
      ['listen', '--port', '0'],
    ] as const;
    it.for(commands)('webhook %s: exit 2 for each collision, before any request', async (command) => {
      const receiver = await testServer((_req, res) => res.writeHead(200).end());
      try {
        for (const [i, [args, message]] of cases.entries()) {
          const to = command[0] === 'send' ? ['--to', receiver.url] : [];
          const r = await cli(i === 0 && command[0] === 'send', ['webhook', ...command, ...to, ...args], {
            input: '{}',
            env: { IMAGING_WEBHOOK_SECRET: 'whsec-collide' },
          });
          expect(r.exitCode, `${command[0]} ${args.join(' ')}: ${r.stderr}`).toBe(2);
          expect(r.stderr).toMatch(message);
        }
        expect(receiver.seen).toEqual([]);
      } finally {
        await receiver.close();
      }
    });
  });
});

describe('webhook send: deadlines, ports and --set', () => {
  /**
   * --timeout is one deadline for the whole answer, not an idle timer that every byte resets: raw
   * TCP receivers on 127.0.0.1 that drip a header a byte at a time, or send interim 1xx answers
   * for ever, faster than the deadline, against the real binary of `webhook send` and of
   * `webhook listen --forward-to`. Then URL and --set inputs that used to go wrong: port 0 (Node
   * sends to port 80) and a 5000-level --set (a stack overflow).
   */
  const SECRET = 'whsec-deadline-test-41d9';

  /** A raw receiver: once a request's head has come, `onRequest` drives the socket. */
  // Concurrently: each case has its own receiver and process, and mostly waits out its --timeout.
  describe.concurrent('webhook send: --timeout bounds the whole answer', () => {
    it.for([
      ['a header one byte at a time', /no complete answer within 300 ms \(\d+ bytes of a status and headers/],
      ['100 Continue for ever', /no final answer within 300 ms \(only \d+ interim 1xx answers\)/],
      ['102 Processing for ever', /no final answer within 300 ms \(only \d+ interim 1xx answers\)/],
    ] as const)(
      'a receiver sending %s: exit 1 soon after --timeout 300, saying why',
      async ([drip, message], { expect }) => {
        const receiver = await rawReceiver(DRIPS[drip]!);
        try {
          const started = Date.now();
          // The real binary for the first; the others in-process (the connection is seen closed below).
          const r = await cli(drip === 'a header one byte at a time', [
            'webhook',
            'send',
            'visit.status_changed',
            '--to',
            receiver.url,
            '--unsigned',
            '--timeout',
            '300',
          ]);
          const took = Date.now() - started;
          expect(r.exitCode, r.stderr).toBe(1);
          // Before the fix this ran until the test's own 20 s kill; start-up of the binary is included.
          expect(took).toBeLessThan(5000);
          expect(r.stdout).toMatch(/^FAILED {5}visit\.status_changed .* no answer: /);
          expect(r.stderr).toMatch(message);
          expect(r.stderr).toMatch(/^hint: The receiver started answering but did not finish/m);
          expect(r.stderr).not.toMatch(/Is the receiver running/);
          // The connection is closed, not left to the receiver.
          await expect.poll(() => receiver.open(), { timeout: 2000 }).toBe(0);
        } finally {
          await receiver.close();
        }
      },
    );
  });

  describe('port 0 is refused, not sent to port 80', () => {
    it.for([
      [['webhook', 'send', 'visit.status_changed', '--unsigned', '--to', 'http://127.0.0.1:0/'], '--to'],
      [['webhook', 'send', 'visit.status_changed', '--unsigned', '--to', 'https://127.0.0.1:00/x'], '--to'],
      [['webhook', 'listen', '--port', '0', '--forward-to', 'http://127.0.0.1:0/'], '--forward-to'],
      [['webhook', 'sign', '--body', '/dev/null', '--curl', 'http://127.0.0.1:0/'], '--curl'],
      [['mock', '--port', '0', '--webhook-url', 'http://127.0.0.1:0/'], '--webhook-url'],
      [['referrals', 'list', '--base-url', 'http://127.0.0.1:0'], '--base-url'],
    ] as const)('%j is exit 2', async ([argv, flag]) => {
      // The real binary for the first, in-process for the others.
      const r = await cli(flag === '--to' && argv.at(-1) === 'http://127.0.0.1:0/', [...argv], {
        env: { IMAGING_WEBHOOK_SECRET: SECRET, IMAGING_TOKEN: 'tok' },
      });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^error: ${flag}: port 0 is not a port anything listens on`, 'm'));
    });
  });

  describe('--set nesting is limited, not a stack overflow', () => {
    // The deepest value through the real binary (its own stack), the other two in-process.
    const send = (set: string, real = false) =>
      cli(real, ['webhook', 'send', 'visit.status_changed', '--print', '--unsigned', '--set', set]);

    it('a JSON value 5000 levels deep is exit 2 naming the limit', async () => {
      const r = await send(`x=${'['.repeat(5000)}${']'.repeat(5000)}`, true);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/^error: --set x: the JSON value nests more than 64 levels deep/m);
      expect(r.stderr).not.toMatch(/Maximum call stack|unexpected failure/);
      expect(r.stdout).toBe('');
    });

    it('a path of 5000 segments is exit 2 naming the limit', async () => {
      const r = await send(`${Array(5000).fill('a').join('.')}=1`);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/^error: --set: the path has 5000 segments; at most 64 are allowed/m);
      expect(r.stderr).not.toMatch(/Maximum call stack|unexpected failure/);
    });

    it('64 segments holding a 64-level value is within the limit and sent as asked', async () => {
      const r = await send(`${Array(64).fill('a').join('.')}=${'['.repeat(64)}${']'.repeat(64)}`);
      expect(r.exitCode, r.stderr).toBe(0);
      const body = JSON.parse(r.stdout.split('\r\n\r\n')[1]!);
      let node = body;
      for (let i = 0; i < 64; i++) node = node.a;
      expect(JSON.stringify(node)).toBe(`${'['.repeat(64)}${']'.repeat(64)}`);
    });
  });
});
