import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockFixture, run } from '../helpers.js';

/**
 * The global options are read wherever they are written: before the group, between the group and
 * its verb, after the verb. A negated one (--no-color) given after the verb is not undone by the
 * program's default, and the word after a bare --json is decided where the parser meets it.
 */
const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

describe('--timeout', () => {
  // Answers are slower than the short timeout and faster than the long one.
  const slow = mockFixture({ latencyMs: 300 });
  beforeAll(() => slow.start());
  afterAll(() => slow.stop());

  it('takes a duration (5s, 1s) as well as milliseconds; anything else names both', async () => {
    const ok = await run(['referrals', 'watch', 'R-240001', '--within', '0s', '--timeout', '1s'], {
      env: slow.env(),
    });
    expect(ok.stderr).not.toMatch(/timeout|whole number/);
    expect([0, 9, 10]).toContain(ok.code);
    const short = await run(['modalities', '--timeout', '100'], { env: slow.env() });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('request timed out after 100 ms');
    const bad = await run(['modalities', '--timeout', '5x'], { env: slow.env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--timeout must be whole milliseconds (30000) or a whole number with a unit (500ms, 5s, 2m)',
    );
  });
});

describe('global options before, inside and after the command', () => {
  it.for([
    ['--verbose', 'referrals', 'list', '--per-page', '1', '--json'],
    ['referrals', '--verbose', 'list', '--per-page', '1', '--json'],
    ['referrals', 'list', '--per-page', '1', '--verbose', '--json'],
  ])('%j: the trace on stderr, the page on stdout', async (argv) => {
    const r = await run(argv, { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/GET .*\/api\/v2\/referrals/);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
  });

  it('--no-color after the verb turns colour off though the program defaults to colour', async () => {
    const coloured = await run(['cpt', '12'], { stderrIsTTY: true });
    expect(coloured.stderr).toContain('\u001b[');
    for (const argv of [
      ['cpt', '12', '--no-color'],
      ['--no-color', 'cpt', '12'],
    ]) {
      const r = await run(argv, { stderrIsTTY: true });
      expect(r.code).toBe(2);
      expect(r.stderr).not.toContain('\u001b');
    }
  });

  it('--json between the group and its verb takes a field list; a verb after it stays the verb', async () => {
    const a = await run(['referrals', '--json', 'id,status', 'list', '--per-page', '1'], { env: fx.env() });
    expect(a.code, a.stderr).toBe(0);
    expect(Object.keys(JSON.parse(a.stdout)[0])).toEqual(['id', 'status']);
    const b = await run(['referrals', '--json', 'list', '--per-page', '1'], { env: fx.env() });
    expect(b.code, b.stderr).toBe(0);
    expect(Object.keys(JSON.parse(b.stdout)[0])).toContain('partner_metadata');
  });

  it('the version answers after any command (imaging cpt -V)', async () => {
    const r = await run(['referrals', 'list', '-V']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
