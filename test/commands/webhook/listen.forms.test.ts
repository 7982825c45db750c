import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { expectUsageError, hasEscapes, PIPED, piped, plain, TERMINAL, widest } from '../../fake-io.js';
import { fakeIO, run } from '../../helpers.js';
import { secretFileFixture } from '../../webhook-fixture.js';

const sf = secretFileFixture('whsec_command_listen');

/** Runs `webhook listen` in-process, sends it one good and one unsigned delivery, then stops it as Ctrl-C would. */
async function listen(form: typeof TERMINAL | typeof PIPED, ...more: string[]) {
  const ac = new AbortController();
  const fake = fakeIO(form);
  const done = main(['webhook', 'listen', '--port', '0', '--secret-file', sf.secretFile, ...more], {
    io: fake.io,
    env: {},
    signal: ac.signal,
  });
  let url = '';
  for (let i = 0; i < 400 && !url; i++) {
    url = /Listening for webhooks on (http:\/\/\S+)/.exec(plain(fake.stderr()))?.[1] ?? '';
    if (!url) await new Promise((r) => setTimeout(r, 5));
  }
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
  const good = await run([
    'webhook',
    'send',
    'visit.status_changed',
    '--to',
    url,
    '--secret-file',
    sf.secretFile,
  ]);
  expect(good.code).toBe(0);
  const unsigned = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ event_name: 'visit.status_changed' }),
    headers: { 'content-type': 'application/json', 'X-Service-Event': 'visit.status_changed' },
  });
  expect(unsigned.status).toBe(400);
  ac.abort(new InterruptedError('SIGINT'));
  return { code: await done, stdout: fake.stdout(), stderr: fake.stderr() };
}

describe('imaging webhook listen', () => {
  it('prints one line per delivery, valid or not, in both forms; Ctrl-C stops it with 130', async () => {
    for (const form of [TERMINAL, PIPED]) {
      const r = await listen(form);
      expect(r.code).toBe(130);
      const out = plain(r.stdout);
      // One delivery per entry, each starting with its time; at 80 columns an entry may wrap.
      const entries = out.split(/\n(?=\d\d:\d\d:\d\d {2})/).map((e) => e.replace(/\s+/g, ' ').trim());
      expect(entries).toHaveLength(2);
      expect(entries[0]).toMatch(/^\d\d:\d\d:\d\d valid visit\.status_changed event [0-9a-f-]{36} /);
      expect(entries[1]).toContain(
        'INVALID visit.status_changed unsigned delivery; there is no X-Service-Signature or X-Service-Timestamp header',
      );
      if (form === TERMINAL) expect(widest(r.stdout)).toBeLessThanOrEqual(80);
      else expect(out.trimEnd().split('\n')).toHaveLength(2);
      if (form === PIPED) expect(hasEscapes(r.stdout + r.stderr)).toBe(false);
      expect(r.stdout + r.stderr).not.toContain('whsec_command_listen');
    }
  });

  it('with --json, one JSON object per delivery', async () => {
    const r = await listen(PIPED, '--json');
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2);
    expect(rows.map((x) => x.valid)).toEqual([true, false]);
  });

  it('refuses a bad port, tolerance or forward URL before listening', async () => {
    expectUsageError(
      await piped(['webhook', 'listen', '--port', '70000', '--secret-file', sf.secretFile]),
      /--port/,
      0,
    );
    expectUsageError(
      await piped(['webhook', 'listen', '--tolerance', 'x', '--secret-file', sf.secretFile]),
      /--tolerance/,
      0,
    );
    expectUsageError(
      await piped(['webhook', 'listen', '--forward-to', 'ftp://x', '--secret-file', sf.secretFile]),
      /--forward-to/,
      0,
    );
  });
});
