import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockFixture, run, tempDir } from '../helpers.js';

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
      "error: unknown command 'frobnicate'\nhint: The verbs of imaging referrals: list, get, payments, notifications, create, export.\n",
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
      ['referrals', 'export', '--format', 'xlsx'],
      'error: --format: unknown format "xlsx"\nhint: Use one of: csv, ndjson, json.\n',
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
