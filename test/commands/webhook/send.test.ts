import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped, plain } from '../../fake-io.js';
import { testServer } from '../../helpers.js';
import { secretFileFixture } from '../../webhook-fixture.js';

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
