import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { parseFault } from '../../src/emulator/faults.js';
import type { Prompter } from '../../src/io.js';
import { BIN, mockFixture, mountTmpfs, run, tempDir } from '../helpers.js';
import { CLI, openPane } from '../terminal.js';

/**
 * The sandbox allowance meter, against the emulator standing in for a sandbox:
 * `IMAGING_ENV=sandbox` with the emulator's URL as the base URL and an IMAGING_TOKEN (the
 * environment's name decides whether requests are counted; `--env local` is never metered). The
 * emulator's own request log is the oracle: the meter must count exactly its 2xx answers.
 */

const fx = mockFixture({ referrals: 300 });

beforeAll(() => fx.start());

afterAll(() => fx.stop());

beforeEach(() => fx.reset());

let n = 0;

/** A fresh sandbox token per test: its own meter key and its own emulator allowance. */
const sandbox = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...fx.env(),
  IMAGING_ENV: 'sandbox',
  IMAGING_TOKEN: `mock-meter-${process.pid}-${++n}`,
  ...extra,
});

const ok2xx = () => fx.apiRequests().filter((r) => r.status >= 200 && r.status < 300).length;

async function meter(env: NodeJS.ProcessEnv) {
  const r = await run(['auth', 'allowance', '--json'], { env });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as {
    used: number;
    limit: number;
    since: string | null;
    ends: string | null;
    exhausted: boolean;
    expired: boolean;
  };
}

describe('the meter counts what the sandbox counts', () => {
  it('2xx answers only, after a mix of successes, 4xx, a 500 retried and a truncated answer retried', async () => {
    const env = sandbox();
    expect((await run(['modalities'], { env })).code).toBe(0);
    expect((await run(['referrals', 'get', '00000000-0000-4000-8000-000000000000'], { env })).code).toBe(4);
    expect((await run(['api', '/cpt_codes'], { env })).code).toBe(7);
    fx.mock.faults.add(parseFault('500:1'));
    expect((await run(['body-parts'], { env })).code).toBe(0);
    fx.mock.faults.add(parseFault('truncated:1'));
    expect((await run(['cpt', '73721'], { env })).code).toBe(0);
    expect((await run(['referrals', 'list', '--all', '--per-page', '50'], { env })).code).toBe(0);
    fx.mock.faults.clear();
    const m = await meter(env);
    // modalities 1, body-parts 1 (after the 500), cpt 2 (the truncated 200 counts: the server did), list 6
    expect(ok2xx()).toBe(10);
    expect(m.used).toBe(ok2xx());
    expect(m.limit).toBe(2000);
    expect(Date.parse(m.ends!) - Date.parse(m.since!)).toBe(7 * 24 * 3600 * 1000);
    expect(m.exhausted).toBe(false);
    expect(m.expired).toBe(false);
  });

  it('auth status shows it in text and as an allowance object in --json', async () => {
    const env = sandbox();
    await run(['modalities'], { env });
    await run(['modalities'], { env });
    const text = await run(['auth', 'status'], { env });
    expect(text.stdout).toMatch(
      /Sandbox allowance: ≈2 of 2,000 requests used \(counted on this machine\), window ends ≈ \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    const json = JSON.parse((await run(['auth', 'status', '--json'], { env })).stdout) as Array<{
      environment: string;
      allowance: unknown;
    }>;
    const row = json.find((r) => r.environment === 'sandbox')!;
    expect(row.allowance).toMatchObject({ used: 2, limit: 2000, exhausted: false, expired: false });
    expect(Object.keys(row.allowance as object).sort()).toEqual(
      ['ends', 'exhausted', 'expired', 'limit', 'since', 'used'].sort(),
    );
    expect(json.filter((r) => r.environment !== 'sandbox').every((r) => r.allowance === null)).toBe(true);
  });

  it('counts nothing outside the sandbox (--env local is the emulator, production is per contract)', async () => {
    const dir = tempDir();
    try {
      const env = { ...sandbox(), IMAGING_ENV: 'local', IMAGING_CONFIG_DIR: dir.path };
      expect((await run(['modalities'], { env })).code).toBe(0);
      expect((await run(['modalities', '--env', 'production'], { env })).code).toBe(0);
      expect(readdirSync(dir.path)).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });

  it('is keyed by a hash of origin and token, in a 0600 file that never holds the token', async () => {
    const env = sandbox();
    await run(['modalities'], { env });
    const file = join(env.IMAGING_CONFIG_DIR!, 'allowance.log');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(env.IMAGING_TOKEN!);
    expect(text).not.toContain(env.IMAGING_TOKEN!.slice(5));
    expect(text).not.toContain('127.0.0.1');
    // The same token at another origin is another meter.
    const other = await meter({ ...env, IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost') });
    expect(other.used).toBe(0);
  });

  it('auth allowance --used/--since corrects it; counting goes on from there', async () => {
    const env = sandbox();
    await run(['modalities'], { env });
    const set = await run(['auth', 'allowance', '--used', '350', '--since', '2026-11-20'], { env });
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('≈350 of 2,000 requests used');
    expect(set.stdout).toContain('window ends ≈ 2026-11-27 00:00 UTC');
    expect(fx.apiRequests()).toHaveLength(1); // auth allowance sends nothing
    await run(['modalities'], { env });
    const m = await meter(env);
    expect(m.used).toBe(351);
    expect(m.since).toBe('2026-11-20T00:00:00.000Z');
    const bad = await run(['auth', 'allowance', '--since', '2999-01-01'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is in the future');
  });
});

describe('two commands at once lose no counts (real processes, one file)', () => {
  it('three concurrent --all listings of 60 pages each: the meter holds all 180', async () => {
    const env = sandbox({ PATH: process.env.PATH });
    const children = [1, 2, 3].map(() =>
      spawn(process.execPath, [BIN, 'referrals', 'list', '--all', '--per-page', '5', '--json'], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    const codes = await Promise.all(children.map(exitOf));
    expect(codes).toEqual([0, 0, 0]);
    expect(ok2xx()).toBe(180);
    expect((await meter(env)).used).toBe(180);
    // Every line of the file is whole: appends were never interleaved.
    const lines = readFileSync(join(env.IMAGING_CONFIG_DIR!, 'allowance.log'), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    for (const line of lines) expect(line).toMatch(/^[0-9a-f]{32} (s \d+ \d+ \d+|set \S+ \S+ \d+|[xe] \d+)$/);
  });

  it("a lookup whose stderr reader left (`--verbose 2>&1 >/dev/null | head -1`) keeps the sandbox's count", () =>
    // The trace line after the answer met the closed pipe and ended the process before the meter
    // had seen the 200 the sandbox had counted: 3 successes on the server, 1 on the meter. A slow
    // answer: head has left before the answer's trace line.
    withSlowSandbox({ latencyMs: 100 }, 'mock-stderr-pipe', async (slow, env) => {
      const lookup = 'node "$BIN" --no-cache --verbose body-parts 2>&1 >/dev/null | head -1 >/dev/null';
      for (const _ of [1, 2]) {
        const child = spawn('bash', ['--norc', '--noprofile', '-c', `${lookup}; exit "\${PIPESTATUS[0]}"`], {
          env: { ...env, BIN },
          stdio: 'ignore',
        });
        expect(await exitOf(child)).toBe(1); // stdout still waited for the answer: never 0 (src/context.ts)
      }
      expect(slow.apiRequests().filter((r) => r.status === 200)).toHaveLength(2);
      expect((await meter(env)).used).toBe(2);
    }));

  it('an export stopped by Ctrl-C keeps the counts of the pages it got', () =>
    withSlowSandbox({ referrals: 300, latencyMs: 15 }, 'mock-ctrl-c', async (slow, env) => {
      const child = spawn(
        process.execPath,
        [BIN, 'referrals', 'export', '--per-page', '5', '--concurrency', '1'],
        { env, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const exited = exitOf(child);
      // Past the first batch written to the file (25), with more held in memory.
      await waitFor(() => slow.apiRequests().length >= 32);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      const answered = slow.apiRequests().filter((r) => r.status === 200).length;
      const used = (await meter(env)).used;
      // One request may have been answered by the server but not yet received when the signal came.
      expect(used).toBeGreaterThanOrEqual(answered - 1);
      expect(used).toBeLessThanOrEqual(answered);
      expect(used).toBeGreaterThan(30);
    }));
});

describe('warnings when a command crosses 80% and 95%', () => {
  it('once at each threshold, on stderr, and not again once past it', async () => {
    const env = sandbox();
    await run(['auth', 'allowance', '--used', '1598'], { env });
    const crossing = await run(['referrals', 'list', '--all'], { env }); // 3 pages: 1598 -> 1601
    expect(crossing.code).toBe(0);
    expect(crossing.stderr).toContain(
      'warning: over 80% of the sandbox allowance is used: ≈1,601 of 2,000 requests used',
    );
    expect(crossing.stdout).not.toContain('Warning');
    const after = await run(['referrals', 'list', '--all'], { env });
    expect(after.stderr).not.toContain('Warning');
    await run(['auth', 'allowance', '--used', '1899'], { env });
    const ninetyFive = await run(['modalities'], { env });
    expect(ninetyFive.stderr).toContain(
      'warning: over 95% of the sandbox allowance is used: ≈1,900 of 2,000',
    );
    expect(ninetyFive.stderr).not.toContain('over 80%');
  });

  it('past 100%: every command that spends requests says the meter says it is used up (an api --paginate too)', async () => {
    const env = sandbox();
    await run(['auth', 'allowance', '--used', '1990'], { env });
    // Past 95% already: a run that crosses no threshold said nothing, even when it spent past the allowance.
    const paginate = await run(['api', '/referrals?per_page=25', '--paginate'], { env });
    expect(paginate.code).toBe(0);
    expect(fx.apiRequests().length).toBe(12);
    expect(paginate.stderr).toContain(
      'warning: the meter says the sandbox allowance is used up: ≈2,002 of 2,000 requests used',
    );
    const again = await run(['modalities', '--no-cache'], { env });
    expect(again.stderr).toContain(
      'warning: the meter says the sandbox allowance is used up: ≈2,003 of 2,000',
    );
    // A command that spends nothing says nothing.
    const view = await run(['auth', 'allowance'], { env });
    expect(view.stderr).not.toContain('used up');
  });
});

describe('429 sandbox_request_limit_reached and 401 api_token_expired', () => {
  const tight = mockFixture({ allowance: 2 });
  beforeAll(() => tight.start());
  afterAll(() => tight.stop());

  it('a 429 marks the token exhausted, and its error block shows the meter', async () => {
    const env = { ...tight.env(), IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-tight' };
    expect((await run(['modalities'], { env })).code).toBe(0);
    expect((await run(['modalities'], { env })).code).toBe(0);
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('code:       sandbox_request_limit_reached');
    expect(r.stderr).toMatch(
      /allowance: {2}≈2 of 2,000 requests used \(counted on this machine\), window ends ≈ .*; the server said the allowance is used up/,
    );
    const m = await meter(env);
    expect(m).toMatchObject({ used: 2, exhausted: true, expired: false });
    // Exhausted means nothing is left: an --all listing stops before its second page.
    const before = tight.apiRequests().length;
    expect((await run(['referrals', 'list', '--all', '--per-page', '5'], { env })).code).toBe(6);
    expect(tight.apiRequests().length - before).toBe(1);
  });

  it('a 401 api_token_expired marks it expired, also when it comes mid-run', async () => {
    const env = { ...tight.env(), IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-expired' };
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('allowance:  ≈0 of 2,000 requests used');
    expect(r.stderr).toContain('the server said the token has expired');
    expect(await meter(env)).toMatchObject({ used: 0, exhausted: false, expired: true });
    const mid = { ...tight.env(), IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-tight-2' };
    tight.mock.faults.add(parseFault('401:1@1'));
    expect((await run(['modalities'], { env: mid })).code).toBe(0);
    expect((await run(['modalities'], { env: mid })).code).toBe(3);
    tight.mock.faults.clear();
    expect(await meter(mid)).toMatchObject({ used: 1, expired: true });
  });
});

const unmount = (path: string) => {
  execFileSync('umount', [path], { stdio: 'pipe' });
  rmSync(join(path, '..'), { recursive: true, force: true });
};

describe('a meter that cannot be written never fails a command', () => {
  it('the meter file is a folder: the command answers as usual (--verbose says why nothing was counted)', async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'allowance.log'));
      const env = sandbox({ IMAGING_CONFIG_DIR: dir.path });
      const r = await run(['referrals', 'list', '--all', '--per-page', '50'], { env });
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n').length).toBeGreaterThan(300);
      const v = await run(['modalities', '--verbose'], { env });
      expect(v.code).toBe(0);
      expect(v.stderr).toMatch(
        /the allowance meter is off for this run: .*allowance\.log is a folder, not a file;/,
      );
      expect((await meter(env)).used).toBe(0);
    } finally {
      dir.cleanup();
    }
  });

  const ro = mountTmpfs('meter', 'size=64k,mode=0755,ro');
  const full = mountTmpfs('meter', 'size=16k,mode=0755');
  afterAll(() => {
    if (!ro.error) unmount(ro.path);
    if (!full.error) unmount(full.path);
  });
  it.skipIf(ro.error !== undefined)('on a read-only file system (a real ro tmpfs)', async () => {
    const env = sandbox({ IMAGING_CONFIG_DIR: ro.path });
    const r = await run(['referrals', 'export', '--per-page', '50'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('from 300 referrals read');
  });
  it.skipIf(full.error !== undefined)('on a full file system (a real 16 KiB tmpfs, filled)', async () => {
    let i = 0;
    try {
      for (;;) writeFileSync(join(full.path, `fill-${i++}`), Buffer.alloc(4096));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    const env = sandbox({ IMAGING_CONFIG_DIR: full.path });
    const r = await run(['referrals', 'list', '--all', '--per-page', '50', '--verbose'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/could not be updated \(.*: ENOSPC\)/);
  });
});

describe('a meter file that is not a regular file of yours: the meter is off, never in the way', () => {
  /**
   * The real binary in a real process: a blocking open of a FIFO would hang it for good (and, the
   * event loop being blocked, SIGTERM's handler would never run). Deadline: 15 s, then SIGTERM,
   * then SIGKILL, so a regression fails here instead of hanging the suite.
   */
  async function binary(args: string[], env: NodeJS.ProcessEnv) {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    let killed: string | undefined;
    const term = setTimeout(() => {
      killed = 'SIGTERM';
      child.kill('SIGTERM');
    }, 15_000);
    const kill = setTimeout(() => {
      killed = 'SIGKILL';
      child.kill('SIGKILL');
    }, 20_000);
    const code = await exitOf(child);
    clearTimeout(term);
    clearTimeout(kill);
    return { code, stdout, stderr, killed };
  }

  it('a FIFO at allowance.log: commands finish at once (no reader, and with a reader nothing is written to it)', async () => {
    const dir = tempDir();
    try {
      const fifo = join(dir.path, 'allowance.log');
      execFileSync('mkfifo', ['-m', '600', fifo]);
      const env = sandbox({ IMAGING_CONFIG_DIR: dir.path });
      const r = await binary(['referrals', 'list', '--all', '--per-page', '50', '--verbose'], env);
      expect(r.killed).toBeUndefined();
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n').length).toBeGreaterThan(300);
      expect(r.stderr).toContain(
        `the allowance meter is off for this run: ${fifo} is a named pipe (FIFO), not a file`,
      );
      const view = await binary(['auth', 'allowance'], env);
      expect(view.code).toBe(0);
      expect(view.stdout).toContain(
        `Sandbox allowance: not known: the allowance meter cannot be read (${fifo} is a named pipe (FIFO), not a file)`,
      );
      // A reader on the FIFO: an open for writing would now succeed; nothing may reach the pipe.
      const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const withReader = await binary(['modalities'], env);
        expect(withReader.killed).toBeUndefined();
        expect(withReader.code).toBe(0);
        let got = 0;
        try {
          got = readSync(reader, Buffer.alloc(4096));
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe('EAGAIN');
        }
        expect(got).toBe(0);
      } finally {
        closeSync(reader);
      }
      expect(lstatSync(fifo).isFIFO()).toBe(true);
    } finally {
      dir.cleanup();
    }
  });

  it('a symlink at allowance.log is not followed: its target is never written, a dangling one never created', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    try {
      const target = join(elsewhere.path, 'precious');
      writeFileSync(target, 'keep me\n', { mode: 0o600 });
      const link = join(dir.path, 'allowance.log');
      symlinkSync(target, link);
      const env = sandbox({ IMAGING_CONFIG_DIR: dir.path });
      const r = await run(['referrals', 'list', '--all', '--per-page', '50', '--verbose'], { env });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`${link} is a symbolic link (the meter never follows one)`);
      expect(readFileSync(target, 'utf8')).toBe('keep me\n');
      const a = await run(['auth', 'allowance', '--json'], { env });
      expect(a.code).toBe(0);
      expect(JSON.parse(a.stdout)).toMatchObject({
        used: 0,
        unreadable: `${link} is a symbolic link (the meter never follows one)`,
      });
      // --used cannot write through it either: exit 1, the target as it was.
      const set = await run(['auth', 'allowance', '--used', '5'], { env });
      expect(set.code).toBe(1);
      expect(set.stderr).toContain(`cannot write the allowance meter: ${link} is a symbolic link`);
      expect(readFileSync(target, 'utf8')).toBe('keep me\n');
      rmSync(target);
      expect((await run(['modalities'], { env })).code).toBe(0);
      expect(readdirSync(elsewhere.path)).toEqual([]);
    } finally {
      dir.cleanup();
      elsewhere.cleanup();
    }
  });

  it.skipIf(process.geteuid?.() !== 0)('a file of another user is neither read nor appended to', async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'allowance.log');
      const env = sandbox({ IMAGING_CONFIG_DIR: dir.path });
      expect((await run(['auth', 'allowance', '--used', '100'], { env })).code).toBe(0);
      const before = readFileSync(file, 'utf8');
      chownSync(file, 65534, 65534);
      expect((await run(['modalities'], { env })).code).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(before);
      const a = await run(['auth', 'allowance'], { env });
      expect(a.code).toBe(0);
      expect(a.stdout).toContain(`${file} belongs to another user (uid 65534), not to you`);
    } finally {
      dir.cleanup();
    }
  });

  it('auth allowance with a folder where the meter goes says it cannot be read, exit 0', async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'allowance.log'));
      const env = sandbox({ IMAGING_CONFIG_DIR: dir.path });
      const r = await run(['auth', 'allowance'], { env });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(
        `Sandbox allowance: not known: the allowance meter cannot be read (${join(dir.path, 'allowance.log')} is a folder, not a file), so nothing is counted on this machine\n`,
      );
      expect(r.stdout).not.toContain('≈0 of 2,000');
      expect(r.stderr).toContain('The meter is off until this is fixed: move it away');
      const status = await run(['auth', 'status'], { env });
      expect(status.stdout).toContain('Sandbox allowance: not known: the allowance meter cannot be read');
    } finally {
      dir.cleanup();
    }
  });
});

describe('costs before big runs', () => {
  const asking = (answer: boolean) => {
    const asked: string[] = [];
    const prompter: Prompter = {
      secret: async () => '',
      confirm: async (message) => {
        asked.push(message);
        return answer;
      },
    };
    return { asked, prompter };
  };

  it('more than is left: exit 6 after page 1, nothing more sent, no file; --yes goes ahead', async () => {
    const env = sandbox();
    await run(['auth', 'allowance', '--used', '1990'], { env });
    const dir = tempDir();
    try {
      const target = join(dir.path, 'r.csv');
      const r = await run(['referrals', 'export', '--per-page', '25', '-o', target], { env });
      expect(r.code).toBe(6);
      expect(r.stderr).toContain(
        'error: this export needs 11 more requests, more than the ≈9 left in the sandbox allowance: stopped before sending them',
      );
      expect(r.stderr).toContain('hint: ');
      expect(fx.apiRequests()).toHaveLength(1);
      expect(readdirSync(dir.path)).toEqual([]);
      const list = await run(['referrals', 'list', '--all', '--per-page', '25'], { env });
      expect(list.code).toBe(6);
      expect(list.stderr).toContain('listing every page of the referrals needs 11 more requests');
      expect(list.stdout).toBe('');
      expect(fx.apiRequests()).toHaveLength(2);
      const yes = await run(['referrals', 'export', '--per-page', '25', '-o', target, '--yes'], { env });
      expect(yes.code).toBe(0);
      expect(yes.stderr).toContain('going ahead (--yes)');
      expect(fx.apiRequests()).toHaveLength(14); // the two page 1s, then the twelve pages of 25
    } finally {
      dir.cleanup();
    }
  });

  it('over a quarter of what is left: asks on a terminal (no: nothing more sent), proceeds with a warning without one', async () => {
    const env = sandbox();
    // Pages of 25: 12 of them. 39 left after page 1; the 11 more are over a quarter of it.
    await run(['auth', 'allowance', '--used', '1960'], { env });
    const no = asking(false);
    const r = await run(['referrals', 'export', '--per-page', '25'], {
      env,
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: no.prompter },
    });
    expect(no.asked).toEqual([
      'This export needs 11 more requests, over a quarter of the ≈39 left in the sandbox allowance (counted on this machine). Continue?',
    ]);
    expect(r.code).toBe(1);
    // To stdout, the CSV header went out before page 1 was asked for; not one referral did.
    expect(r.stdout.split('\n')).toEqual([expect.stringMatching(/^referral_id,reference,/), '']);
    expect(r.stderr).toContain('stopped at your answer: the 11 requests were not sent');
    expect(fx.apiRequests()).toHaveLength(1);
    const yes = asking(true);
    const y = await run(['referrals', 'export', '--per-page', '25'], {
      env,
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: yes.prompter },
    });
    expect(yes.asked).toHaveLength(1);
    expect(y.code).toBe(0);
    expect(y.stderr).toContain('from 300 referrals read');
    const flagged = asking(true);
    const f = await run(['referrals', 'export', '--per-page', '25', '--yes'], {
      env,
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: flagged.prompter },
    });
    expect(f.code).toBe(0);
    expect(flagged.asked).toEqual([]);
    const piped = await run(['referrals', 'list', '--all', '--per-page', '25', '--json'], { env });
    expect(piped.code).toBe(0);
    expect(piped.stderr).toContain(
      'warning: listing every page of the referrals needs 11 more requests, over a quarter',
    );
    expect(piped.stderr).toContain('going ahead (no terminal to ask on)');
    expect(JSON.parse(piped.stdout)).toHaveLength(300);
  });

  it('Ctrl-C at the question, at a real terminal: the prompt line is ended, and the stop says page 1 was fetched', async () => {
    const env = sandbox();
    await run(['auth', 'allowance', '--used', '1800'], { env });
    const dir = tempDir();
    const target = join(dir.path, 'r.csv');
    const pane = await openPane({
      cols: 200,
      command: `${CLI} referrals export --per-page 5 -o '${target}'`,
      env,
    });
    try {
      await pane.waitForScreen((lines) => lines.some((l) => l.endsWith('Continue? [y/N]')));
      await pane.keys('C-c');
      expect(await pane.exited()).toBe(130);
      const lines = await pane.screen();
      const asked = lines.findIndex((l) => l.includes('Continue? [y/N]'));
      expect(lines[asked]).toMatch(/^This export needs 59 more requests, .*\. Continue\? \[y\/N\]$/);
      expect(lines[asked + 1]).toBe(
        `Export stopped after page 1 was fetched (5 referrals read), before any was written: no file was written at ${target}.`,
      );
      expect(lines.join('\n')).not.toContain('Export stopped after 0 referrals');
      expect(readdirSync(dir.path)).toEqual([]);
      expect(fx.apiRequests()).toHaveLength(1);
    } finally {
      await pane.close();
      dir.cleanup();
    }
  });

  it('pages the reference cache will answer cost nothing: a cached icd10 --all is not refused', async () => {
    // Seen: every page cached, no request would be sent, yet exit 6 "needs 49 more requests".
    const cache = tempDir();
    try {
      const env = sandbox({ IMAGING_CACHE_DIR: cache.path });
      const warm = await run(['icd10', 'a', '--all', '--per-page', '5', '--yes'], { env });
      expect(warm.code, warm.stderr).toBe(0);
      await run(['auth', 'allowance', '--used', '1990'], { env });
      fx.reset();
      const again = await run(['icd10', 'a', '--all', '--per-page', '5'], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe(warm.stdout);
      expect(fx.apiRequests()).toEqual([]);
      expect(again.stderr).not.toContain('more requests');
      // Not cached (--no-cache): the pages cost requests again, and the check stops it.
      const uncached = await run(['icd10', 'a', '--all', '--per-page', '5', '--no-cache'], { env });
      expect(uncached.code).toBe(6);
      expect(fx.apiRequests()).toHaveLength(1);
    } finally {
      cache.cleanup();
    }
  });

  it('a page 1 with no totals (a bare array): a warning when the meter is low, exit 6 when it says used up', async () => {
    // Seen: with the meter at 1,995 an export of a bare-array list spent 31 requests, no word first.
    const bare = mockFixture({ referrals: 300, referralListShape: 'bare' });
    await bare.start();
    const dir = tempDir();
    try {
      const env = { ...sandbox(), IMAGING_BASE_URL: bare.mock.url };
      await run(['auth', 'allowance', '--used', '1800'], { env });
      const low = await run(['referrals', 'export', '--per-page', '50', '-o', join(dir.path, 'a.csv')], {
        env,
      });
      expect(low.code, low.stderr).toBe(0);
      expect(low.stderr).toContain(
        'warning: this export will take as many requests as there are pages, which the server did not say; ≈',
      );
      await run(['auth', 'allowance', '--used', '2000'], { env });
      bare.reset();
      const out = await run(['referrals', 'export', '--per-page', '50', '-o', join(dir.path, 'b.csv')], {
        env,
      });
      expect(out.code).toBe(6);
      expect(out.stderr).toContain(
        'the meter says the sandbox allowance is used up: stopped before sending more',
      );
      expect(bare.apiRequests()).toHaveLength(1);
      const yes = await run(
        ['referrals', 'export', '--per-page', '50', '-o', join(dir.path, 'b.csv'), '--yes'],
        {
          env,
        },
      );
      expect(yes.code).toBe(0);
    } finally {
      dir.cleanup();
      await bare.stop();
    }
  });

  it('a small run says nothing, and outside the sandbox nothing is checked', async () => {
    const env = sandbox();
    await run(['auth', 'allowance', '--used', '1000'], { env });
    const r = await run(['referrals', 'export', '--per-page', '50'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('Warning');
    const local = await run(['referrals', 'export', '--per-page', '25'], {
      env: { ...env, IMAGING_ENV: 'local' },
    });
    expect(local.code).toBe(0);
  });

  it('referrals export --dry-run fetches page 1 only and reports referrals, pages and requests', async () => {
    const env = sandbox();
    const r = await run(['referrals', 'export', '--dry-run', '--per-page', '7'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Dry run: the export would fetch 300 referrals in 43 pages of 7, taking 43 requests',
    );
    expect(r.stdout).toContain('Sandbox allowance: ≈1 of 2,000 requests used');
    expect(r.stdout).toContain('≈1,999 left');
    expect(fx.apiRequests()).toHaveLength(1);
    const j = await run(['referrals', 'export', '--dry-run', '--json'], {
      env: { ...env, IMAGING_ENV: 'local' },
    });
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual({
      referrals: 300,
      pages: 3,
      per_page: 100,
      requests: 3,
      allowance_left: null,
    });
    expect(fx.apiRequests()).toHaveLength(2);
  });
});

/** An emulator of its own, slowed, standing in for a sandbox with `token`: for a test that catches a real process mid-run. */
async function withSlowSandbox(
  options: { referrals?: number; latencyMs: number },
  token: string,
  test: (slow: ReturnType<typeof mockFixture>, env: NodeJS.ProcessEnv) => Promise<void>,
): Promise<void> {
  const slow = mockFixture(options);
  await slow.start();
  try {
    await test(slow, { ...slow.env(), IMAGING_ENV: 'sandbox', IMAGING_TOKEN: token, PATH: process.env.PATH });
  } finally {
    await slow.stop();
  }
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

/** Waits for a real condition, however long it takes (the test's timeout is the only deadline). */
const waitFor = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
};
