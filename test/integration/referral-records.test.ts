import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { parse } from 'csv-parse/sync';
import { json, mockFixture, run, testServer } from '../helpers.js';

/**
 * `referrals payments ID` and `referrals notifications ID` against the emulator: a table with the
 * columns people read, every field in JSON/NDJSON/CSV, the per-environment path, and the 403 a
 * partner meets until the read is enabled for the account.
 */
const fx = mockFixture({ referrals: 12 });
let id = '';
beforeAll(async () => {
  await fx.start();
  const r = await run(['referrals', 'list', '--json'], { env: fx.env() });
  id = JSON.parse(r.stdout)[1].id;
});
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('referrals payments', () => {
  it('prints the date, amount, check number and procedures as a table', async () => {
    const r = await run(['referrals', 'payments', id], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    const [head, row] = r.stdout.split('\n');
    expect(head).toMatch(/^DATE\s+AMOUNT\s+CHECK NUMBER\s+PROCEDURES\s+ID$/);
    expect(row).toMatch(
      /^2026-03-01\s+450\.50\s+CHK-1001\s+\d{5} .+\s+00000000-0000-4000-8000-[0-9a-f]{12}$/,
    );
    expect(fx.apiRequests().map((q) => q.path)).toEqual([`/api/v2/referrals/${id}/payments`]);
  });

  it('--json is the records as the API sent them; CSV has every field, one column each', async () => {
    const j = await run(['referrals', 'payments', id, '--json'], { env: fx.env() });
    const records = JSON.parse(j.stdout);
    expect(Object.keys(records[0])).toEqual(['id', 'amount', 'date', 'check_number', 'procedures']);
    expect(records[0].amount).toBe(450.5);
    const c = await run(['referrals', 'payments', id, '--format', 'csv'], { env: fx.env() });
    const rows = parse(c.stdout, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0]!)).toEqual(['id', 'amount', 'date', 'check_number', 'procedures']);
    expect(JSON.parse(rows[0]!.procedures!)).toEqual(records[0].procedures);
    const n = await run(['referrals', 'payments', id, '--format', 'ndjson'], { env: fx.env() });
    expect(
      n.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(records);
  });

  it('a 403 endpoint_not_enabled says the read is enabled per account and whom to ask (exit 5)', async () => {
    const r = await run(['referrals', 'payments', id], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/code:\s+endpoint_not_enabled/);
    expect(r.stderr).toMatch(
      /^hint: Reading a referral's payments \("payment read" in the API\) is enabled per account/m,
    );
    expect(r.stderr).toMatch(/API support contact, or your account manager, to enable payment read/);
    expect(r.stdout).toBe('');
  });

  it('a 404 says the referral may not exist or the path may be another, and how to set it', async () => {
    const r = await run(['referrals', 'payments', '00000000-0000-4000-8000-00000000ffff'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /hint: Either there is no referral .* or this server keeps payments at another path/,
    );
    expect(r.stderr).toContain("imaging config set path.payments '/api/v2/…/{id}/…' --env local");
  });

  it('an empty list is exit 0 with a note on stderr', async () => {
    const server = await testServer((_req, res) => json(res, 200, { payments: [] }));
    try {
      const r = await run(['referrals', 'payments', id], {
        env: { ...fx.env(), IMAGING_BASE_URL: server.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`No payments for referral ${id}.`);
    } finally {
      await server.close();
    }
  });
});

describe('referrals notifications', () => {
  it('prints updated, channel, type, status and visit; JSON keeps every field', async () => {
    const r = await run(['referrals', 'notifications', id], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    const [head, row] = r.stdout.split('\n');
    expect(head).toMatch(/^UPDATED\s+CHANNEL\s+TYPE\s+STATUS\s+VISIT\s+CREATED\s+ID$/);
    expect(row).toMatch(
      /^2026-01-05T14:00:05.000Z\s+sms\s+appointment_reminder\s+delivered\s+[0-9a-f-]{36}\s+/,
    );
    const j = await run(['referrals', 'notifications', id, '--json'], { env: fx.env() });
    expect(Object.keys(JSON.parse(j.stdout)[0])).toEqual([
      'id',
      'channel',
      'notification_type',
      'status',
      'created_at',
      'updated_at',
      'visit_id',
    ]);
  });

  it('403 names the notification read', async () => {
    const r = await run(['referrals', 'notifications', id], {
      env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }),
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/enable notification read for your group/);
  });

  it('server text in a table goes through the sanitiser; JSON stays byte-exact', async () => {
    const hostile = {
      id: 'n1',
      channel: 'sms\u001b[31m',
      notification_type: 'x\u202ey',
      status: 'sent',
      created_at: 'a',
      updated_at: 'b',
      visit_id: null,
    };
    const server = await testServer((_req, res) => json(res, 200, [hostile]));
    try {
      const env = { ...fx.env(), IMAGING_BASE_URL: server.url };
      const t = await run(['referrals', 'notifications', id], { env });
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout).not.toContain('\u001b');
      expect(t.stdout).not.toContain('\u202e');
      const j = await run(['referrals', 'notifications', id, '--json'], { env });
      expect(JSON.parse(j.stdout)).toEqual([hostile]);
    } finally {
      await server.close();
    }
  });
});

describe('the paths are set per environment', () => {
  it('config set path.payments changes where payments are read, for that environment only', async () => {
    const env = fx.env();
    const s = await run(['config', 'set', 'path.payments', '/api/v2/billing/referrals/{id}/payments'], {
      env,
    });
    expect(s.code, s.stderr).toBe(0);
    const file = join(fx.configDir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).environments.local.paths).toEqual({
      payments: '/api/v2/billing/referrals/{id}/payments',
    });
    const g = await run(['config', 'get', 'path.payments'], { env });
    expect(g.stdout).toBe('/api/v2/billing/referrals/{id}/payments\n');
    const l = await run(['config', 'list'], { env });
    expect(l.stdout).toMatch(/path\.payments\s+local\s+\/api\/v2\/billing\/referrals\/\{id\}\/payments/);
    fx.reset();
    const r = await run(['referrals', 'payments', id], { env });
    expect(r.code).toBe(4); // the emulator has no such route
    expect(fx.apiRequests().map((q) => q.path)).toEqual([`/api/v2/billing/referrals/${id}/payments`]);
    expect(r.stderr).toContain('path.payments is set to /api/v2/billing/referrals/{id}/payments');
    // Another environment keeps the default; notifications keep theirs.
    const other = await run(['config', 'get', 'path.payments', '--env', 'sandbox'], { env });
    expect(other.code).toBe(0);
    expect(other.stdout).toBe('/api/v2/referrals/{id}/payments\n');
    expect(other.stderr).toContain('path.payments: the default (sandbox)');
    fx.reset();
    expect((await run(['referrals', 'notifications', id], { env })).code).toBe(0);
    const u = await run(['config', 'unset', 'path.payments'], { env });
    expect(u.code).toBe(0);
    expect((await run(['referrals', 'payments', id], { env })).code).toBe(0);
  });

  it('a path that answers an object (not a list): the hint names what shows it as sent, and it does', async () => {
    const env = fx.env();
    // The referral itself: an object, as a mistaken path.payments would give.
    expect((await run(['config', 'set', 'path.payments', '/api/v2/referrals/{id}'], { env })).code).toBe(0);
    try {
      for (const format of [[], ['--json'], ['--format', 'csv']]) {
        const r = await run(['referrals', 'payments', id, ...format], { env });
        expect([r.code, r.stdout], format.join(' ')).toEqual([1, '']);
        expect(r.stderr).toContain('the payments answer is an object, not a list');
        // Not "--json shows the answer as sent": --json fails the same way.
        expect(r.stderr).not.toContain('--json shows');
        expect(r.stderr).toContain(`See the answer as sent with: imaging api /api/v2/referrals/${id} `);
        expect(r.stderr).toContain('path.payments is set to /api/v2/referrals/{id}');
      }
      const a = await run(['api', `/api/v2/referrals/${id}`], { env });
      expect(a.code, a.stderr).toBe(0);
      expect(JSON.parse(a.stdout).id).toBe(id);
    } finally {
      await run(['config', 'unset', 'path.payments'], { env });
    }
  });

  it.for([
    ['https://evil.example/{id}', /is a URL/],
    ['//evil.example/{id}', /is a URL/],
    ['/api/v2/referrals/payments', /must hold \{id\} exactly once/],
    ['/api/v2/{id}/{id}', /must hold \{id\} exactly once/],
    ['api/v2/referrals/{id}', /must start with \//],
    ['/api/v2/referrals/{id}/payments?all=1', /not allowed in a path/],
    ['/api/v2/../admin/{id}', /must not hold \. or \.\. segments/],
    ['/api/v2/%2e%2e/%2e%2e/%2e%2e/outside/{id}', /percent-encoded dot, slash/],
    ['/api/v2/.%2e/outside/{id}', /percent-encoded dot, slash/],
    ['/api/v2/%2E./outside/{id}', /percent-encoded dot, slash/],
    ['/api/v2/a%2Fb/{id}', /percent-encoded dot, slash/],
    ['/api/v2/a%5cb/{id}', /percent-encoded dot, slash/],
    ['/api/v2/%252e%252e/{id}', /percent-encoded dot, slash/],
    ['/api/v2/a%zz/{id}', /not followed by two hex digits/],
  ] as const)('refuses %s (exit 2)', async ([value, message]) => {
    const r = await run(['config', 'set', 'path.payments', value], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

/**
 * An attacker's path: `%2e%2e` is a `..` to every URL parser (Node's included), so a path that
 * passed a plain-`..` check sent the bearer token below the base URL's prefix. A real server on
 * 127.0.0.1 with the base URL http://127.0.0.1:PORT/prefix records where the requests land.
 */
describe('percent-encoded dots never lead the token out of the base URL', () => {
  const climbing = '/api/v2/%2e%2e/%2e%2e/%2e%2e/outside/{id}';
  it.for(['payments', 'notifications'] as const)(
    'a hand-edited path.%s with percent-encoded dots is refused on read; nothing is sent (exit 1)',
    async (kind) => {
      const server = await testServer((_req, res) => json(res, 200, []));
      try {
        const env = { ...fx.env(), IMAGING_BASE_URL: `${server.url}/prefix`, IMAGING_TOKEN: 'tok-secret' };
        const { writeFileSync } = await import('node:fs');
        writeFileSync(
          join(fx.configDir, 'config.json'),
          JSON.stringify({ environments: { local: { paths: { [kind]: climbing } } } }),
        );
        const r = await run(['referrals', kind, id, '--verbose'], { env });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`"environments.local.paths.${kind}" must not hold a percent-encoded dot`);
        expect(r.stderr).toContain(`imaging config set path.${kind}`);
        expect(server.seen).toEqual([]);
      } finally {
        await server.close();
        const { rmSync } = await import('node:fs');
        rmSync(join(fx.configDir, 'config.json'), { force: true });
      }
    },
  );

  it.for([
    [123, /"environments\.local\.paths\.payments" is a number, not text/],
    [{ x: 1 }, /"environments\.local\.paths\.payments" is an object, not text/],
  ] as const)(
    'a non-text path.payments (%j) is named, not "e.trim is not a function"',
    async ([value, msg]) => {
      const { writeFileSync, rmSync } = await import('node:fs');
      const file = join(fx.configDir, 'config.json');
      writeFileSync(file, JSON.stringify({ environments: { local: { paths: { payments: value } } } }));
      try {
        const r = await run(['referrals', 'payments', id], { env: fx.env() });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(msg);
        expect(r.stderr).not.toMatch(/is not a function/);
        // config set repairs it.
        const s = await run(['config', 'set', 'path.payments', '/api/v2/referrals/{id}/payments'], {
          env: fx.env(),
        });
        expect(s.code, s.stderr).toBe(0);
        expect((await run(['referrals', 'payments', id], { env: fx.env() })).code).toBe(0);
      } finally {
        rmSync(file, { force: true });
      }
    },
  );

  it('a raw API path with %2e%2e is refused before any request, and the trace shows the URL as sent', async () => {
    const server = await testServer((_req, res) => json(res, 200, { ok: true }));
    try {
      const env = { ...fx.env(), IMAGING_BASE_URL: `${server.url}/prefix`, IMAGING_TOKEN: 'tok-secret' };
      const bad = await run(['api', '/api/v2/%2e%2e/%2e%2e/%2e%2e/outside'], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/leads out of \/prefix\/api\/v2 \(to \/outside\)/);
      expect(server.seen).toEqual([]);
      // Within the prefix, `a/%2e%2e/modalities` is sent as /prefix/api/v2/modalities: the trace says so.
      const ok = await run(['api', '/api/v2/a/%2e%2e/modalities', '--verbose'], { env });
      expect(ok.code, ok.stderr).toBe(0);
      expect(server.seen.map((q) => q.url)).toEqual(['/prefix/api/v2/modalities']);
      expect(ok.stderr).toContain(`> GET ${server.url}/prefix/api/v2/modalities`);
      expect(ok.stderr).not.toContain('%2e');
    } finally {
      await server.close();
    }
  });
});

describe('the 403 and 404 hints', () => {
  it('the notifications 403 names the other gated reads, not itself; every environment is said to be enabled separately', async () => {
    const r = await run(['referrals', 'notifications', id], {
      env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }),
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/\(as are payment reads, auto-book and FHIR\)/);
    expect(r.stderr).not.toMatch(/as are notification reads/);
    expect(r.stderr).toMatch(
      /for your group on local \(each environment, sandbox and production, is enabled separately\)/,
    );
  });

  it('the 404 hint shows the default path with {id}, not %7Bid%7D', async () => {
    const r = await run(['referrals', 'payments', '00000000-0000-4000-8000-00000000ffff'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/the default is a guess \(\/api\/v2\/referrals\/\{id\}\/payments\)/);
    expect(r.stderr).not.toContain('%7B');
  });
});
