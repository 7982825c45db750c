import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emulator/faults.js';
import { mockFixture, run, tempDir } from '../helpers.js';

/**
 * `referrals export --dry-run --resume -o F` reports what the resume would cost, from the
 * checkpoint (checked as --resume checks it), not what a whole export would. Seen: a checkpoint of
 * 25 pages of 30, the dry run said 30 requests and "would stop with exit 6" where the resume
 * needed 5 and went through. A real checkpoint, made by a real fault on page 26.
 */

const fx = mockFixture({ referrals: 300 });
beforeAll(async () => {
  await fx.start();
  configureSandbox(fx.configDir, fx.mock.url);
});
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
let target: string;
let n = 0;
let env: NodeJS.ProcessEnv;
const args = ['referrals', 'export', '--per-page', '10', '--concurrency', '1'];
const pagesAsked = () =>
  fx
    .apiRequests()
    .filter((r) => r.path.startsWith('/api/v2/referrals?'))
    .map((r) => Number(new URL(r.path, 'http://x').searchParams.get('page')));

beforeEach(async () => {
  dir = tempDir();
  target = join(dir.path, 'out.csv');
  env = fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-dry-resume-${process.pid}-${++n}` });
  fx.mock.faults.add(parseFault('500:*@25', '/api/v2/referrals')); // pages 1-25 answered, 26 fails
  const failed = await run([...args, '-o', target], { env });
  fx.mock.faults.clear();
  expect(failed.code).toBe(1);
  expect(failed.stderr).toContain('25 complete pages (250 referrals) are kept in a checkpoint');
  fx.reset();
});
afterEach(() => dir.cleanup());

const checkpointFiles = () => {
  const cp = join(dir.path, '.out.csv.checkpoint');
  return readdirSync(cp).map(
    (f) => `${f}:${statSync(join(cp, f)).mtimeMs}:${readFileSync(join(cp, f)).length}`,
  );
};

describe('--dry-run --resume', () => {
  it('reports the 5 pages still to fetch, not 30, and no exit 6 the resume would not give', async () => {
    await run(['auth', 'allowance', '--used', '1985'], { env }); // ≈15 left: 30 is too many, 5 is not
    const before = checkpointFiles();
    const r = await run([...args, '-o', target, '--dry-run', '--resume'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'Dry run: the checkpoint holds 25 pages (250 referrals); --resume would fetch 50 more referrals in 5 pages of 10 (from page 26), taking 5 requests (retries aside).',
    );
    expect(r.stdout).toContain('≈14 left'); // its own request (page 26) counted
    expect(r.stdout).not.toContain('exit 6');
    expect(r.stderr).toContain('Nothing was written; this dry run took 1 request.');
    expect(pagesAsked()).toEqual([26]);
    // Nothing written, moved or removed: the checkpoint as it was, no other file.
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
    expect(checkpointFiles()).toEqual(before);
    // What it said holds: the resume fetches pages 26-30 (5 requests) and is not refused.
    fx.reset();
    const resumed = await run([...args, '-o', target, '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(pagesAsked()).toEqual([26, 27, 28, 29, 30]);
  });

  it('--json: the pages, referrals and requests still to come, and the checkpoint', async () => {
    const r = await run([...args, '-o', target, '--dry-run', '--resume', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      referrals: 50,
      pages: 5,
      per_page: 10,
      requests: 5,
      resume: { from_page: 26, checkpoint_pages: 25, checkpoint_referrals: 250, list_changed: null },
    });
    expect(report.allowance_left).toBeGreaterThan(1900);
  });

  it('the cost past what is left: says the resumed export would stop with exit 6, and it does', async () => {
    await run(['auth', 'allowance', '--used', '1997'], { env }); // ≈3 left: 5 is too many
    const r = await run([...args, '-o', target, '--dry-run', '--resume'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'That is more than is left: the resumed export would stop with exit 6 after page 26 unless given --yes.',
    );
    fx.reset();
    const resumed = await run([...args, '-o', target, '--resume'], { env });
    expect(resumed.code).toBe(6);
    expect(pagesAsked()).toEqual([26]);
  });

  it('no checkpoint: exit 2 before any request, as a plain --resume', async () => {
    const other = join(dir.path, 'other.csv');
    const plain = await run([...args, '-o', other, '--resume'], { env });
    const dry = await run([...args, '-o', other, '--dry-run', '--resume'], { env });
    expect(plain.code).toBe(2);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toBe(plain.stderr);
    expect(dry.stderr).toContain('--resume: there is no checkpoint of an export to');
    const noFile = await run([...args, '--dry-run', '--resume'], { env });
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('--resume needs -o FILE');
    const device = await run([...args, '-o', '/dev/null', '--dry-run', '--resume'], { env });
    expect(device.code).toBe(2);
    expect(device.stderr).toContain('/dev/null is not a regular file, so it has no checkpoint');
    expect(fx.apiRequests()).toEqual([]);
  });

  it('the checkpoint of another export (--per-page 20): exit 2, the same message as --resume', async () => {
    const argv = ['referrals', 'export', '--per-page', '20', '-o', target, '--resume'];
    const dry = await run([...argv, '--dry-run'], { env });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain(
      '--resume: the checkpoint of ' +
        target +
        ' is of another export: --per-page (10 there, 20 here) differs',
    );
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
  });

  it('an expired checkpoint: exit 2, and the dry run leaves it where it is', async () => {
    const later = () => new Date(Date.now() + 25 * 3600_000);
    const dry = await run([...args, '-o', target, '--dry-run', '--resume'], { env, deps: { now: later } });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain(
      'expired (saved 25 h ago; checkpoints are kept 24 hours); --resume would remove it',
    );
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
    expect(fx.apiRequests()).toEqual([]);
  });

  // Last in this file: the emulator's store has no remove, so the referral added stays.
  it('a list that changed since the checkpoint: says --resume would refuse it, and keeps the checkpoint', async () => {
    const store = fx.mock.referrals;
    store.add({ ...store.at(0), id: '0f0e0d0c-0b0a-4000-8000-000000000001' });
    const r = await run([...args, '-o', target, '--dry-run', '--resume'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'But the referral list changed since the checkpoint was saved (the API now reports 301 referrals, not 300): --resume would refuse to continue it (exit 1)',
    );
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
    fx.reset();
    const resumed = await run([...args, '-o', target, '--resume'], { env });
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain('the API now reports 301 referrals, not 300');
  });
});

/** The sandbox's configured base URL is the emulator's: there checkpoints are kept by default. */
function configureSandbox(configDir: string, url: string): void {
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({ environments: { sandbox: { base_url: url } } }),
    { mode: 0o600 },
  );
}
