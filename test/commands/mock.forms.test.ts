import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { expectUsageError, PIPED, piped, plain, TERMINAL } from '../fake-io.js';
import { fakeIO } from '../helpers.js';

/** Runs `imaging mock` in-process until it prints its URL, asks it for modalities, then stops it as Ctrl-C would. */
async function emulator(form: typeof TERMINAL | typeof PIPED) {
  const ac = new AbortController();
  const fake = fakeIO(form);
  const done = main(['mock', '--port', '0', '--referrals', '30'], {
    io: fake.io,
    env: {},
    signal: ac.signal,
  });
  let url = '';
  for (let i = 0; i < 400 && !url; i++) {
    url = fake.stdout().trim();
    if (!url) await new Promise((r) => setTimeout(r, 5));
  }
  const res = await fetch(`${url}/api/v2/referrals`, { headers: { authorization: 'Bearer mock-token' } });
  const body = (await res.json()) as { referrals: unknown[] };
  ac.abort(new InterruptedError('SIGINT'));
  return {
    code: await done,
    url,
    status: res.status,
    referrals: body.referrals.length,
    stdout: fake.stdout(),
    stderr: fake.stderr(),
  };
}

describe('imaging mock', () => {
  it('prints its URL alone on stdout, serves the API, and stops on Ctrl-C with 130, in both forms', async () => {
    for (const form of [TERMINAL, PIPED]) {
      const r = await emulator(form);
      expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(r.stdout).toBe(`${r.url}\n`);
      expect(r.status).toBe(200);
      expect(r.referrals).toBe(25);
      expect(plain(r.stderr)).toContain('emulator listening on');
      expect(r.code).toBe(130);
    }
  });

  it('refuses bad options and secrets in argv before listening', async () => {
    expectUsageError(await piped(['mock', '--port', 'x']), /--port/, 0);
    expectUsageError(await piped(['mock', '--webhook-secret', 'abc']), /--webhook-secret-file FILE/, 0);
    expectUsageError(await piped(['mock', '--list-shape', 'tree']), /tree/, 0);
  });
});
