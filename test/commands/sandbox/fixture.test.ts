import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError } from '../../fake-io.js';
import { json, mockFixture, run, tempDir, testServer } from '../../helpers.js';

describe('imaging sandbox fixture', () => {
  const fx = mockFixture();
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());
  beforeEach(() => fx.reset());

  it('makes the fixture named, and the referral it made can be read back', async () => {
    const r = await run(['sandbox', 'fixture', 'two_visits'], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    const made = JSON.parse(r.stdout);
    expect(made.visits).toHaveLength(2);
    expect(r.stderr).toContain(`Made fixture two_visits: ${made.reference} ${made.id}`);
    expect(fx.apiRequests().map((q) => `${q.method} ${q.path}`)).toEqual(['POST /api/v2/sandbox/fixtures']);
    const got = await run(['referrals', 'get', made.id, '--json'], { env: fx.env() });
    expect(JSON.parse(got.stdout).id).toBe(made.id);
  });

  it("a name the server does not know: the server's reasons, exit 7", async () => {
    const r = await run(['sandbox', 'fixture', 'nope'], { env: fx.env() });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(
      '- name must be one of referral, ready_to_book, booked, report_uploaded, two_visits',
    );
  });

  it('refuses production before any request; --dry-run sends nothing', async () => {
    const prod = await run(['sandbox', 'fixture', 'booked'], {
      env: fx.env({ IMAGING_ENV: 'production', IMAGING_TOKEN: 'mock-prod' }),
    });
    expectUsageError(prod, /works on the sandbox and local environments only, not production/, 0);
    // No token needed to see what would go (the sandbox, its base URL set, no token stored).
    const dry = await run(['sandbox', 'fixture', 'booked', '--dry-run'], {
      env: fx.env({ IMAGING_ENV: 'sandbox' }),
    });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ name: 'booked' });
    expect(dry.stderr).toContain(`POST ${fx.mock.url}/api/v2/sandbox/fixtures`);
    expect(fx.apiRequests()).toEqual([]);
  });

  it('goes to path.sandbox_fixture on a second server, with {} when no name is given', async () => {
    const dir = tempDir();
    const server = await testServer((_req, res) => json(res, 201, { id: 'f1', reference: 'R-1' }));
    try {
      const env = { IMAGING_ENV: 'sandbox', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path };
      const set = await run(
        ['config', 'set', 'path.sandbox_fixture', '/api/v2/qa/fixtures', '--env', 'sandbox'],
        {
          env,
        },
      );
      expect(set.code, set.stderr).toBe(0);
      const r = await run(['sandbox', 'fixture'], { env: { ...env, IMAGING_TOKEN: 'sandbox-token' } });
      expect(r.code, r.stderr).toBe(0);
      expect(server.seen.map((q) => `${q.method} ${q.url} ${q.body}`)).toEqual([
        'POST /api/v2/qa/fixtures {}',
      ]);
      expect(server.seen[0]!.headers.authorization).toBe('Bearer sandbox-token');
    } finally {
      await server.close();
      dir.cleanup();
    }
  });
});

describe('sandbox fixture at a configured path that is wrong', () => {
  it('the hint keeps the key in lower case and names --env', async () => {
    const dir = tempDir();
    const server = await testServer((_req, res) => json(res, 404, { error: 'Not Found' }));
    try {
      const env = { IMAGING_ENV: 'sandbox', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path };
      await run(['config', 'set', 'path.sandbox_fixture', '/api/v2/qa/fixtures', '--env', 'sandbox'], {
        env,
      });
      const r = await run(['sandbox', 'fixture'], { env: { ...env, IMAGING_TOKEN: 'sandbox-token' } });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain(
        "hint: path.sandbox_fixture is set to POST /api/v2/qa/fixtures for sandbox; if this server keeps the sandbox's fixture elsewhere, set it with: imaging config set path.sandbox_fixture 'POST /api/v2/…' --env sandbox\n",
      );
    } finally {
      await server.close();
      dir.cleanup();
    }
  });
});
