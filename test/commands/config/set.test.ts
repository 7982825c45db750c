import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, onTerminal, piped } from '../../fake-io.js';
import { mockFixture, run, tempDir } from '../../helpers.js';
import '../../reliability.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());
const env = () => ({ IMAGING_CONFIG_DIR: dir.path, IMAGING_ENV: 'local' });

describe('imaging config set', () => {
  it('stores a value, says so on stderr (both forms), in an owner-only file', async () => {
    const t = await onTerminal(['config', 'set', 'base-url', 'http://127.0.0.1:9/'], { env: env() });
    expect(t.code).toBe(0);
    expect(t.stdout).toBe('');
    expect(t.stderr).toBe('base-url for local set to http://127.0.0.1:9.\n');
    const p = await piped(['config', 'set', 'base-url', 'http://127.0.0.1:8', '--env', 'sandbox'], {
      env: env(),
    });
    expect(p.code).toBe(0);
    expect(p.stderr).toBe('base-url for sandbox set to http://127.0.0.1:8.\n');
    const file = join(dir.path, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('http://127.0.0.1:8');
    expect((await piped(['config', 'get', 'base-url', '--env', 'sandbox'], { env: env() })).stdout).toBe(
      'http://127.0.0.1:8\n',
    );
  });

  it('refuses bad keys and values, and the token, without writing', async () => {
    const before = readFileSync(join(dir.path, 'config.json'), 'utf8');
    expectUsageError(
      await piped(['config', 'set', 'token', 'abc'], { env: env() }),
      /the token is not a config value/,
      0,
    );
    expectUsageError(
      await piped(['config', 'set', 'colour', 'red'], { env: env() }),
      /unknown config key "colour"/,
      0,
    );
    expectUsageError(await piped(['config', 'set', 'base-url', 'not a url'], { env: env() }), /base-url/, 0);
    expectUsageError(await piped(['config', 'set', 'env', 'staging'], { env: env() }), /staging/, 0);
    expectUsageError(await piped(['config', 'set', 'env'], { env: env() }), /missing required argument/, 0);
    expect(readFileSync(join(dir.path, 'config.json'), 'utf8')).toBe(before);
  });
});

describe('config', () => {
  const fx = mockFixture();

  beforeAll(() => fx.start());

  afterAll(async () => {
    await fx.stop();
    cfg?.cleanup(); // the last test's folder
  });

  let cfg: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    cfg?.cleanup();
    cfg = tempDir();
  });

  // The local environment, pointed at this test's emulator, with an empty config store.
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: cfg.path, ...extra });

  const local = ['--env', 'local'];

  const TOKEN = 'mock-ok-TOKEN-7f3a9c2e';

  it('sets, gets, lists and unsets; precedence is flag > env var > stored > default', async () => {
    expect(
      (await run(['config', 'set', 'base-url', 'https://stored.example.com/pre/api/v2'], { env: env() }))
        .code,
    ).toBe(0);
    expect((await run(['config', 'get', 'base-url'], { env: env() })).stdout).toBe(
      'https://stored.example.com/pre\n',
    );
    const status = async (extraArgs: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
      JSON.parse(
        (await run(['--env', 'sandbox', ...extraArgs, 'auth', 'status', '--json'], { env: env(extraEnv) }))
          .stdout,
      )[0];
    expect(await status([])).toMatchObject({
      base_url: 'https://stored.example.com/pre',
      base_url_source: 'config',
    });
    expect(await status([], { IMAGING_BASE_URL: 'https://env.example.com' })).toMatchObject({
      base_url: 'https://env.example.com',
      base_url_source: 'IMAGING_BASE_URL',
    });
    expect(
      await status(['--base-url', 'https://flag.example.com'], {
        IMAGING_BASE_URL: 'https://env.example.com',
      }),
    ).toMatchObject({
      base_url: 'https://flag.example.com',
      base_url_source: '--base-url',
    });
    await run(['config', 'set', 'env', 'local'], { env: env() });
    const list = await run(['config', 'list'], { env: env() });
    expect(list.stdout).toMatch(/env\s+\(all\)\s+local/);
    expect(list.stdout).toMatch(/base-url\s+sandbox\s+https:\/\/stored\.example\.com\/pre/);
    expect((await run(['config', 'unset', 'base-url', '--env', 'sandbox'], { env: env() })).code).toBe(0);
    const missing = await run(['config', 'get', 'base-url', '--env', 'sandbox'], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('base-url is not set for sandbox');
  });

  it('masks tokens in config list', async () => {
    await run([...local, 'auth', 'login', '--with-token', '--no-verify'], { env: env(), stdin: TOKEN });
    const r = await run(['config', 'list', '--json'], { env: env() });
    expect(r.stdout).toContain('****9c2e');
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('never takes a token as an argument', async () => {
    const r = await run(['config', 'set', 'token', 'abc'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('imaging auth login');
  });

  it('rejects unknown keys, bad URLs and unknown environments', async () => {
    expect((await run(['config', 'set', 'colour', 'red'], { env: env() })).code).toBe(2);
    expect((await run(['config', 'set', 'base-url', 'not a url'], { env: env() })).code).toBe(2);
    expect((await run(['config', 'set', 'env', 'staging'], { env: env() })).stderr).toContain(
      'unknown environment "staging"',
    );
  });

  it('says clearly when the config store cannot be written', async () => {
    const { writeFileSync } = await import('node:fs');
    const blocker = join(cfg.path, 'not-a-dir');
    writeFileSync(blocker, '');
    const r = await run(['config', 'set', 'env', 'local'], {
      env: { IMAGING_CONFIG_DIR: join(blocker, 'sub') },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot write the config file .*not-a-dir\/sub\/config.json/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints the path of the store', async () => {
    expect((await run(['config', 'path'], { env: env() })).stdout).toBe(`${join(cfg.path, 'config.json')}\n`);
  });

  it('reports a corrupt config file clearly', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(cfg.path, 'config.json'), '{not json');
    const r = await run(['modalities'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not valid JSON');
  });
});

describe('the paths are set per environment', () => {
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
    expect(other.stdout).toBe('GET /api/v2/referrals/{id}/payments\n');
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
    // What the send-time check refuses is refused here too, not first when the path is used.
    ['/api/v2/{id}/..%00', /holds a character that is not printable ASCII/],
    ['/api/v2/{id}/%C0%AE%C0%AE', /holds a character that is not printable ASCII/],
  ] as const)('refuses %s (exit 2)', async ([value, message]) => {
    const r = await run(['config', 'set', 'path.payments', value], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
