import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, mockFixture, run, tempDir, testServer } from '../helpers.js';

/**
 * One error style: what the parser refuses (an unknown command, verb or option) is printed as
 * every other error is, `error:` then `hint:`, exit 2; and the hints of a refused token (401) and
 * of an endpoint not enabled (403) are one each, the 401 one in the words of where the token came from.
 */
describe("the parser's refusals in the one error block", () => {
  it.for([
    [['referal'], "error: unknown command 'referal'\nhint: Did you mean referrals?\n"],
    [['referrals', 'lst'], "error: unknown command 'lst'\nhint: Did you mean list?\n"],
    [
      ['referrals', 'frobnicate'],
      "error: unknown command 'frobnicate'\nhint: The verbs of imaging referrals: list, find, get, documents, payments, notifications, create, update, auto-book, export, watch, download.\n",
    ],
    [
      ['notifications'],
      "error: unknown command 'notifications'\nhint: Did you mean imaging referrals notifications? (notifications is a verb of a group)\n",
    ],
    [
      ['modalities', 'extra'],
      "error: too many arguments for 'modalities'. Expected 0 arguments but got 1.\nhint: See: imaging modalities --help\n",
    ],
    [
      ['referrals', 'export', '--format', 'xls'],
      'error: --format: unknown format "xls"\nhint: Use one of: csv, ndjson, json, xlsx.\n',
    ],
    [
      ['mock', '--list-shape', 'xml'],
      'error: invalid value for --list-shape\nhint: Allowed choices are object, bare.\n',
    ],
  ] as Array<[string[], string]>)('imaging %j', async ([argv, stderr]) => {
    const r = await run(argv);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', stderr]);
  });
});

describe("the parser's refusals look like every other error on a terminal", () => {
  it('coloured error: and hint: on a colour terminal; plain with --no-color, wherever it is written', async () => {
    const tty = await run(['referal'], { stderrIsTTY: true });
    expect(tty.stderr).toMatch(
      /^\u001b\[31m\u001b\[1merror:\u001b\[22m\u001b\[39m unknown command 'referal'\n/,
    );
    expect(tty.stderr).toContain('\u001b[33mhint:\u001b[39m');
    for (const argv of [
      ['--no-color', 'referal'],
      ['referrals', 'list', '--frob', '--no-color'],
    ]) {
      const plain = await run(argv, { stderrIsTTY: true });
      expect(plain.code).toBe(2);
      expect(plain.stderr).toMatch(/^error: unknown /);
      expect(plain.stderr).not.toContain('\u001b');
    }
  });
});

describe('one hint for a refused token, knowing where it came from', () => {
  const fx = mockFixture();
  const dir = tempDir();
  beforeAll(() => fx.start());
  afterAll(async () => {
    await fx.stop();
    dir.cleanup();
  });

  it('IMAGING_TOKEN refused: the hint says to change IMAGING_TOKEN, not to log in', async () => {
    const env = { ...fx.env(), IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'not-a-mock-token' };
    const r = await run(['modalities', '--no-cache'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^hint: The token in IMAGING_TOKEN was refused/m);
    expect(r.stderr).toContain('auth login cannot help');
  });

  it('a stored token refused: the hint says to log in again, for that environment', async () => {
    const env = { IMAGING_CONFIG_DIR: dir.path };
    const login = await run(
      ['auth', 'login', '--env', 'production', '--base-url', fx.mock.url, '--with-token', '--no-verify'],
      { env, stdin: 'not-a-mock-token\n' },
    );
    expect(login.code, login.stderr).toBe(0);
    const r = await run(['modalities', '--no-cache', '--env', 'production'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /^hint: The stored production token was refused\. .*log in again: imaging auth login --env production$/m,
    );
  });
});

describe('missing token', () => {
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

  it('exits 3 with how to log in, sending nothing', async () => {
    const r = await run(['--env', 'sandbox', '--base-url', fx.mock.url, 'cpt', '73721'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: not logged in to the sandbox environment');
    expect(r.stderr).toContain('hint: Run: imaging auth login');
    expect(fx.apiRequests()).toHaveLength(0);
  });
  it('exits 2 when no base URL is known for the environment', async () => {
    const r = await run(['--env', 'production', 'modalities'], { env: env({ IMAGING_TOKEN: 'x' }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('imaging config set base-url https://… --env production');
  });
});

describe('"the output above is incomplete" only when it is above', () => {
  // Words that say what they mean.

  const fx = mockFixture({ referrals: 40 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  const failingServer = () =>
    testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      if (page === 2) return json(res, 404, { message: 'gone', code: 'not_found' });
      const referrals = Array.from({ length: 2 }, (_, i) => ({
        ...fx.mock.referrals.at(i),
        id: `00000000-0000-4000-8000-00000000000${i}`,
      }));
      json(res, 200, { referrals, meta: { current_page: 1, total_pages: 3, total_count: 6, next_page: 2 } });
    });

  it.each([
    [true, 'the output above is incomplete'],
    [false, 'the output sent to standard output is incomplete'],
  ])('stdout a terminal: %s -> "%s"', async (tty, words) => {
    const srv = await failingServer();
    try {
      const r = await run(['referrals', 'export', '--per-page', '2', '--concurrency', '1'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path },
        stdoutIsTTY: tty,
      });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain(words);
      if (!tty) expect(r.stderr).not.toContain('above');
    } finally {
      await srv.close();
    }
  });
});
