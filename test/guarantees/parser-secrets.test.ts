import { describe, expect, it } from 'vitest';
import { run } from '../helpers.js';

/**
 * The parser never prints the value of an option it refuses: `--opt=VALUE` is named as `--opt`,
 * on every command and before or after the command's name, so a secret typed there does not reach
 * a terminal, a CI log or a bug report.
 */
const SECRET = 'sk_live_d0n0tpr1nt';

describe('a parser error never echoes an option value', () => {
  it.for([
    ['auth', 'login', `--with-token=${SECRET}`],
    ['modalities', `--frobnicate=${SECRET}`],
    [`--frobnicate=${SECRET}`, 'modalities'],
    ['referrals', `--frobnicate=${SECRET}`, 'list'],
    ['referrals', 'list', `--password=${SECRET}`],
    ['webhook', 'verify', `--secret=${SECRET}`],
    ['mock', `--webhook-secret=${SECRET}`],
    [`--token=${SECRET}`, 'cpt', '73721'],
    ['cpt', `-y${SECRET}`, '73721'],
    ['config', 'list', `--api-token=${SECRET}`],
    ['modalities', '--timeout', SECRET],
    ['mock', '--port', SECRET],
    ['referrals', 'list', '--param', SECRET],
    ['api', '/referrals', '-f', SECRET],
  ])('imaging %s …: exit 2, the option named, its value never', async (argv) => {
    const r = await run(argv, { env: { IMAGING_CONFIG_DIR: '/nonexistent-imaging-test' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: /);
    expect(r.stderr + r.stdout).not.toContain(SECRET);
    expect(r.stderr + r.stdout).not.toContain('d0n0t');
  });

  it('a flag that takes no value says so, by name (auth login --with-token=…)', async () => {
    const r = await run(['auth', 'login', `--with-token=${SECRET}`]);
    expect(r.stderr).toBe(
      'error: --with-token takes no value\nhint: Give --with-token alone, without "=…".\n',
    );
  });

  it('an unknown option is in the one error block, with a suggestion from the global options too', async () => {
    const r = await run(['referrals', 'list', `--formt=${SECRET}`]);
    expect(r.stderr).toBe("error: unknown option '--formt'\nhint: Did you mean --format?\n");
  });
});
