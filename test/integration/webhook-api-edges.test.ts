import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signatureHeaderValue } from '../../src/webhook/sign.js';
import { json, run, testServer } from '../helpers.js';
import { secretFileFixture, VISIT_EVENT } from '../webhook-fixture.js';

/** Issue 8 item 11: webhook verify and `imaging api` edge cases, each recreated for real. */

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

describe('webhook verify', () => {
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

describe('imaging api builds bodies and queries without prototypes', () => {
  let srv: Awaited<ReturnType<typeof testServer>> | undefined;
  afterEach(async () => {
    await srv?.close();
    srv = undefined;
  });
  const env = () => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: srv!.url,
    IMAGING_CONFIG_DIR: '/nonexistent',
  });

  it('-f "__proto__[x]=1" is a field in the body; Object.prototype is untouched', async () => {
    srv = await testServer((_req, res) => json(res, 201, { ok: true }));
    const r = await run(
      [
        'api',
        'POST',
        '/patients',
        '-f',
        '__proto__[x]=1',
        '-F',
        'constructor[prototype][y]=2',
        '-f',
        'name=A',
      ],
      { env: env() },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(srv.seen[0]!.body).toBe('{"constructor":{"prototype":{"y":2}},"__proto__":{"x":"1"},"name":"A"}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).y).toBeUndefined();
  });

  it('-f "__proto__=1" and --param __proto__=… go into the query', async () => {
    srv = await testServer((_req, res) => json(res, 200, { referrals: [], meta: { current_page: 1 } }));
    const a = await run(['api', 'GET', '/patients', '-f', '__proto__=1', '-f', 'a[]=2'], { env: env() });
    expect(a.code).toBe(0);
    const b = await run(['referrals', 'list', '--param', '__proto__=x', '--json'], { env: env() });
    expect(b.code).toBe(0);
    const queries = srv.seen.map((s) => decodeURIComponent(new URL(s.url, 'http://x').search));
    expect(queries[0]).toContain('__proto__=1');
    expect(queries[0]).toContain('a[]=2');
    expect(queries[1]).toContain('__proto__=x');
  });

  it('a key that both holds a value and nests is a usage error, not a crash', async () => {
    srv = await testServer((_req, res) => json(res, 201, {}));
    const r = await run(['api', 'POST', '/patients', '-f', 'a=1', '-f', 'a[b]=2'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a already holds a value');
    expect(srv.seen).toHaveLength(0);
  });
});
