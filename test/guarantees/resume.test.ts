import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { parseFault } from '../../src/emulator/faults.js';
import { BIN, mockFixture, type RunOptions, run, tempDir, testServer, tmpfsFolder } from '../helpers.js';

/**
 * Resumable exports: an export that stops after some pages keeps them as a
 * checkpoint beside the target, and `--resume` fetches only the rest, giving a file byte-identical
 * to an uninterrupted export. Each failure is recreated: a persistent fault on page k, a real
 * SIGINT to the real binary, a real full tmpfs, a list that shifted at the seam, an old checkpoint
 * (the clock injected).
 */

const fx = mockFixture({ referrals: 120 });
beforeAll(async () => {
  await fx.start();
  configureSandbox(fx.configDir, fx.mock.url);
});
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  fx.reset();
  fx.mock.faults.clear();
  dir = tempDir();
});
afterEach(() => {
  dir.cleanup();
  rmSync(`${dir.path}-config`, { recursive: true, force: true });
});

const sandbox = (extra: NodeJS.ProcessEnv = {}) =>
  fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-resume-suite', ...extra });
const inject = (spec: string) => fx.mock.faults.add(parseFault(spec, '/api/v2/referrals'));
/** The page numbers the emulator was asked for, in order. */
const pagesAsked = () =>
  fx
    .apiRequests()
    .filter((r) => r.path.startsWith('/api/v2/referrals?'))
    .map((r) => Number(new URL(r.path, 'http://x').searchParams.get('page')));
const mode = (p: string) => statSync(p).mode & 0o777;
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);

/** A clean export, for comparison, in a folder of its own. */
async function clean(args: string[], env: NodeJS.ProcessEnv, opts: RunOptions = {}): Promise<Buffer> {
  const where = tempDir();
  try {
    const target = join(where.path, 'clean');
    const r = await run(['referrals', 'export', ...args, '-o', target], { env, ...opts });
    expect(r.code).toBe(0);
    return readFileSync(target);
  } finally {
    where.cleanup();
  }
}

describe('a fault on page k, then --resume', () => {
  it.for<[string, string[]]>([
    ['csv, a row per referral', []],
    ['ndjson, a row per visit', ['--format', 'ndjson', '--rows', 'visit']],
    ['json, the referrals as sent', ['--format', 'json']],
    [
      'csv, a row per procedure, only some visits',
      ['--rows', 'procedure', '--visit-status', 'booked,report_uploaded'],
    ],
  ])('%s: byte-identical to a clean run, pages 1..k-1 not fetched again', async ([, extra], { task }) => {
    const args = [...extra, '--per-page', '10', '--concurrency', '1'];
    const expected = await clean(args, sandbox());
    fx.reset();
    const target = join(dir.path, 'out.data');
    inject('500:*@5'); // pages 1-5 answered, page 6 fails on every try
    const failed = await run(['referrals', 'export', ...args, '-o', target], { env: sandbox() });
    task.meta.faultsInjected = 3;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('5 complete pages (50 referrals) are kept in a checkpoint');
    expect(failed.stderr).toContain(
      `To continue: imaging referrals export ${args.join(' ')} -o ${target} --resume`,
    );
    noStack(failed.stderr);
    // Owner-only: a 0700 folder with a hidden name, its two files 0600; nothing else is left.
    const cp = join(dir.path, '.out.data.checkpoint');
    expect(readdirSync(dir.path)).toEqual(['.out.data.checkpoint']);
    expect(mode(cp)).toBe(0o700);
    expect(readdirSync(cp).sort()).toEqual(['data.partial', 'state.json']);
    for (const f of readdirSync(cp)) expect(mode(join(cp, f))).toBe(0o600);
    // The data is exactly the first 5 pages of the clean export.
    const partial = readFileSync(join(cp, 'data.partial'));
    expect(expected.subarray(0, partial.length).equals(partial)).toBe(true);

    fx.mock.faults.clear();
    fx.reset();
    const resumed = await run(['referrals', 'export', ...args, '-o', target, '--resume'], { env: sandbox() });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('Continued from the checkpoint: 5 pages saved earlier, 7 fetched now.');
    expect(readFileSync(target).equals(expected)).toBe(true);
    expect(pagesAsked()).toEqual([6, 7, 8, 9, 10, 11, 12]);
    expect(readdirSync(dir.path)).toEqual(['out.data']);
    expect(mode(target)).toBe(0o600);
  });

  it('with pages fetched 4 at a time: the checkpoint ends at a complete page, and the resumed file is identical', async () => {
    const args = ['--per-page', '10'];
    const expected = await clean(args, sandbox());
    const target = join(dir.path, 'out.csv');
    inject('500:*@7');
    const failed = await run(['referrals', 'export', ...args, '-o', target], { env: sandbox() });
    expect(failed.code).toBe(1);
    const saved = Number(/(\d+) complete pages? /.exec(failed.stderr)?.[1]);
    expect(saved).toBeGreaterThanOrEqual(1);
    fx.mock.faults.clear();
    fx.reset();
    const resumed = await run(['referrals', 'export', ...args, '-o', target, '--resume'], { env: sandbox() });
    expect(resumed.code).toBe(0);
    expect(readFileSync(target).equals(expected)).toBe(true);
    expect(Math.min(...pagesAsked())).toBe(saved + 1);
  });

  it('a resumed export that fails again keeps a checkpoint with more pages, which resumes to the same file', async () => {
    const args = ['--format', 'ndjson', '--per-page', '10', '--concurrency', '1'];
    const expected = await clean(args, sandbox());
    const target = join(dir.path, 'out.ndjson');
    inject('500:*@3');
    expect((await run(['referrals', 'export', ...args, '-o', target], { env: sandbox() })).code).toBe(1);
    fx.mock.faults.clear();
    inject('500:*@4');
    const again = await run(['referrals', 'export', ...args, '-o', target, '--resume'], { env: sandbox() });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('7 complete pages (70 referrals) are kept');
    fx.mock.faults.clear();
    fx.reset();
    const done = await run(['referrals', 'export', ...args, '-o', target, '--resume'], { env: sandbox() });
    expect(done.code).toBe(0);
    expect(readFileSync(target).equals(expected)).toBe(true);
    expect(pagesAsked()).toEqual([8, 9, 10, 11, 12]);
  });
});

describe('where checkpoints are kept, and when they go', () => {
  const failOnce = async (env: NodeJS.ProcessEnv, extra: string[] = []) => {
    inject('500:*@3');
    const r = await run(
      [
        'referrals',
        'export',
        '--per-page',
        '10',
        '--concurrency',
        '1',
        ...extra,
        '-o',
        join(dir.path, 'out.csv'),
      ],
      { env },
    );
    fx.mock.faults.clear();
    expect(r.code).toBe(1);
    return r;
  };

  it('production (patient data): nothing is left unless --resumable', async () => {
    const production = fx.env({ IMAGING_ENV: 'production', IMAGING_TOKEN: 'mock-resume-suite' });
    const r = await failOnce(production);
    expect(r.stderr).toMatch(/Export stopped after \d+ referrals: no file was written at/);
    expect(r.stderr).toContain('Started with --resumable, its complete pages would have been kept');
    expect(readdirSync(dir.path)).toEqual([]);
    const kept = await failOnce(production, ['--resumable']);
    expect(kept.stderr).toContain('3 complete pages (30 referrals) are kept in a checkpoint');
    expect(kept.stderr).toMatch(/To continue: imaging .*--resumable -o \S+ --resume/);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
  });

  it('the command to continue is quoted for a shell, and taken as it stands, without the --param values', async () => {
    const r = await failOnce(sandbox(), ['--param', "note=it's here", '--param=other=secret-value']);
    const line = /To continue: (.*)/.exec(r.stderr)?.[1] ?? '';
    // Parameters may hold patient data: never printed; --resume takes them from the checkpoint.
    expect(line).not.toMatch(/--param|it's here|it'\\''s|secret-value/);
    // The shell gives back the very arguments (printed by sh itself, one per line).
    const words = execFileSync('sh', ['-c', `set -- ${line}; printf '%s\\n' "$@"`], { encoding: 'utf8' });
    expect(words.trimEnd().split('\n')).toEqual([
      'imaging',
      'referrals',
      'export',
      '--per-page',
      '10',
      '--concurrency',
      '1',
      '-o',
      join(dir.path, 'out.csv'),
      '--resume',
    ]);
    fx.reset();
    const argv = words.trimEnd().split('\n').slice(1);
    const resumed = await run(argv, { env: sandbox() });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(pagesAsked()[0]).toBe(4);
    const asked = new URL(fx.apiRequests()[0]?.path ?? '/', 'http://x').searchParams;
    expect(asked.get('note')).toBe("it's here");
    expect(asked.get('other')).toBe('secret-value');
  });

  it('a target whose name needs quoting is quoted for a shell', async () => {
    const target = join(dir.path, "it's out.csv");
    inject('500:*@3');
    const r = await run(['referrals', 'export', '--per-page', '10', '--concurrency', '1', '-o', target], {
      env: sandbox(),
    });
    fx.mock.faults.clear();
    const line = /To continue: (.*)/.exec(r.stderr)?.[1] ?? '';
    const words = execFileSync('sh', ['-c', `set -- ${line}; printf '%s\\n' "$@"`], { encoding: 'utf8' });
    expect(words.trimEnd().split('\n').slice(-2)).toEqual([target, '--resume']);
  });

  it('the sandbox pointed at another server than its configured base URL: like production', async () => {
    const elsewhere = `${dir.path}-config`;
    configureSandbox(elsewhere, 'https://sandbox.example.com');
    await failOnce(sandbox({ IMAGING_CONFIG_DIR: elsewhere }));
    expect(readdirSync(dir.path)).toEqual([]);
    await failOnce(sandbox({ IMAGING_CONFIG_DIR: elsewhere }), ['--resumable']);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
  });

  it('an expired checkpoint is swept by any later export, whatever its target', async () => {
    const cache = tempDir();
    try {
      const env = sandbox({ IMAGING_CACHE_DIR: join(cache.path, 'cache') });
      const t0 = Date.now();
      await failOnce(env);
      expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
      // Another export, to standard output, a day later: the old checkpoint goes.
      const later = await run(['referrals', 'export', '--per-page', '50'], {
        env,
        deps: { now: () => new Date(t0 + 25 * 3600_000) },
      });
      expect(later.code).toBe(0);
      expect(later.stderr).toContain('Removed 1 expired checkpoint of earlier exports');
      expect(readdirSync(dir.path)).toEqual([]);
      // Once gone, it is forgotten: the next export says nothing.
      const again = await run(['referrals', 'export', '--per-page', '50'], {
        env,
        deps: { now: () => new Date(t0 + 26 * 3600_000) },
      });
      expect(again.stderr).not.toContain('expired checkpoint');
    } finally {
      cache.cleanup();
    }
  });

  it('local (whatever server it points at): like production', async () => {
    await failOnce(fx.env());
    expect(readdirSync(dir.path)).toEqual([]);
    await failOnce(fx.env(), ['--resumable']);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
  });

  it('the next export to the same target removes an old checkpoint, and says so', async () => {
    await failOnce(sandbox());
    const r = await run(['referrals', 'export', '--per-page', '10', '-o', join(dir.path, 'out.csv')], {
      env: sandbox(),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Removed the checkpoint of an earlier export to');
    expect(readdirSync(dir.path)).toEqual(['out.csv']);
  });

  it('a checkpoint older than 24 hours is not continued, and is removed (the clock injected)', async () => {
    const t0 = Date.now();
    const at = (hours: number) => ({ deps: { now: () => new Date(t0 + hours * 3600_000) } });
    await failOnce(sandbox());
    fx.reset();
    const args = [
      'referrals',
      'export',
      '--per-page',
      '10',
      '--concurrency',
      '1',
      '-o',
      join(dir.path, 'out.csv'),
      '--resume',
    ];
    // 23 hours on: still good (checked, then stopped by a fault so that it stays).
    inject('500:*');
    const young = await run(args, { env: sandbox(), ...at(23) });
    expect(young.code).toBe(1);
    expect(pagesAsked()[0]).toBe(4);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
    fx.mock.faults.clear();
    fx.reset();
    const old = await run(args, { env: sandbox(), ...at(24.5) });
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('expired (saved 25 h ago; checkpoints are kept 24 hours) and was removed');
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});

describe('a checkpoint that cannot be trusted or kept', () => {
  const args = () => [
    'referrals',
    'export',
    '--per-page',
    '10',
    '--concurrency',
    '1',
    '-o',
    join(dir.path, 'out.csv'),
  ];

  it('saved in the future (the clock went back): refused like an expired one, and removed', async () => {
    const t0 = Date.now();
    inject('500:*@3');
    expect((await run(args(), { env: sandbox(), deps: { now: () => new Date(t0) } })).code).toBe(1);
    fx.mock.faults.clear();
    fx.reset();
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
    // A minute of slack for a clock step: 30 s back still continues (stopped again to keep it).
    inject('500:*');
    const slack = await run([...args(), '--resume'], {
      env: sandbox(),
      deps: { now: () => new Date(t0 - 30_000) },
    });
    expect(slack.code).toBe(1);
    expect(pagesAsked()[0]).toBe(4);
    fx.mock.faults.clear();
    fx.reset();
    const back = await run([...args(), '--resume'], {
      env: sandbox(),
      deps: { now: () => new Date(t0 - 2 * 3600_000) },
    });
    expect(back.code).toBe(2);
    expect(back.stderr).toContain('says it was saved in the future');
    expect(back.stderr).toContain('was removed');
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it.skipIf(process.geteuid?.() !== 0)(
    "another user's empty folder in its place (a world-writable, non-sticky folder): left alone, and no checkpoint kept",
    async () => {
      chmodSync(dir.path, 0o777); // world-writable, no sticky bit: anyone may rename over anything
      const theirs = join(dir.path, '.out.csv.checkpoint');
      mkdirSync(theirs);
      chmodSync(theirs, 0o777);
      chownSync(theirs, 65534, 65534);
      const before = statSync(theirs);
      inject('500:*@3');
      const r = await run(args(), { env: sandbox() });
      fx.mock.faults.clear();
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `warning: ${theirs} is in the way of a checkpoint: it is not a private folder of yours (0700), so it is left alone; this export keeps no checkpoint if it stops.`,
      );
      expect(r.stderr).toContain(`(No checkpoint was kept: ${theirs} is in the way and was left alone.)`);
      expect(r.stderr).not.toContain('are kept in a checkpoint');
      // The sandbox keeps checkpoints by default: the --resumable hint would be wrong here.
      expect(r.stderr).not.toContain('--resumable');
      const after = statSync(theirs);
      expect([after.ino, after.uid, after.mode & 0o7777]).toEqual([before.ino, 65534, 0o777]);
      expect(readdirSync(theirs)).toEqual([]);
      // Nothing of ours is left beside it (no staging folder, no temporary file).
      expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
    },
  );
});

describe('--resume refuses what it cannot continue, before any request', () => {
  const target = () => join(dir.path, 'out.csv');
  const base = ['referrals', 'export', '--per-page', '10', '--concurrency', '1'];

  it.for<[string, string[], RegExp]>([
    [
      'another format',
      ['--format', 'ndjson'],
      /is of another export: format \(csv there, ndjson here\) differs$/m,
    ],
    ['another page size', ['--per-page', '20'], /--per-page \(10 there, 20 here\)/],
    ['other parameters', ['--param', 'status=pending'], /export: --param differs$/m],
    ['the formula guard off', ['--no-formula-guard'], /export: --no-formula-guard differs$/m],
    ['two things', ['--bom', '--no-formula-guard'], /export: --no-formula-guard, --bom differ$/m],
    ['other rows', ['--rows', 'visit'], /--rows \(referral there, visit here\)/],
    ['another environment', [], /environment \(sandbox there, production here\)/],
  ])('a checkpoint of %s: exit 2, kept', async ([what, extra, message]) => {
    inject('500:*@3');
    expect((await run([...base, '-o', target()], { env: sandbox() })).code).toBe(1);
    fx.mock.faults.clear();
    fx.reset();
    const env =
      what === 'another environment'
        ? fx.env({ IMAGING_ENV: 'production', IMAGING_TOKEN: 'mock-resume-suite' })
        : sandbox();
    const r = await run([...base, ...extra, '-o', target(), '--resume'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('hint: Give the same options as the export that saved it');
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
  });

  it.for<[string, string[], RegExp]>([
    ['no checkpoint', ['-o', 'X'], /--resume: there is no checkpoint of an export to/],
    ['no -o', [], /--resume needs -o FILE/],
    ['--resumable without -o', ['--resumable'], /--resumable needs -o FILE/],
  ])('%s: exit 2', async ([, extra, message]) => {
    const argv = [...base, ...extra.map((a) => (a === 'X' ? target() : a))];
    if (!argv.includes('--resumable')) argv.push('--resume');
    const r = await run(argv, { env: sandbox() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('data changed inside the checkpoint: exit 1 before any request', async () => {
    inject('500:*@3');
    expect((await run([...base, '-o', target()], { env: sandbox() })).code).toBe(1);
    fx.mock.faults.clear();
    fx.reset();
    const data = join(dir.path, '.out.csv.checkpoint', 'data.partial');
    const bytes = readFileSync(data);
    bytes[100] = bytes[100] === 0x41 ? 0x42 : 0x41;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(data, bytes);
    const r = await run([...base, '-o', target(), '--resume'], { env: sandbox() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the checkpoint's data is not what was saved");
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual(['.out.csv.checkpoint']);
  });
});

describe('the seam: the list must be the one the checkpoint was cut from', () => {
  // A list server of its own: 50 referrals, 10 a page, page 4 failing while `failing` is set.
  const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  let list: Array<{ id: string; reference: string }> = [];
  let failing = false;
  let server: Awaited<ReturnType<typeof testServer>>;
  beforeAll(async () => {
    server = await testServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const page = Number(url.searchParams.get('page') ?? 1);
      const per = Number(url.searchParams.get('per_page') ?? 10);
      if (failing && page === 4) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":"boom"}');
        return;
      }
      const totalPages = Math.max(1, Math.ceil(list.length / per));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          referrals: list.slice((page - 1) * per, page * per),
          meta: { current_page: page, total_pages: totalPages, total_count: list.length },
        }),
      );
    });
    await makeCheckpoint();
  });
  const env = (where = dir.path) => {
    configureSandbox(`${where}-config`, server.url);
    return {
      IMAGING_ENV: 'sandbox',
      IMAGING_BASE_URL: server.url,
      IMAGING_TOKEN: 'seam-token',
      IMAGING_CONFIG_DIR: `${where}-config`, // its own folder: only checkpoint files go beside the target
    };
  };
  const argv = (where = dir.path) => [
    'referrals',
    'export',
    '--format',
    'ndjson',
    '--per-page',
    '10',
    '--concurrency',
    '1',
    '-o',
    join(where, 'out.ndjson'),
  ];
  const pagesSeen = () => server.seen.map((s) => Number(new URL(s.url, 'http://x').searchParams.get('page')));
  const fresh = () => Array.from({ length: 50 }, (_, i) => ({ id: uuid(i + 1), reference: `R-${i + 1}` }));
  // The checkpoint a real failure on page 4 leaves, made once; each test resumes a copy of it beside
  // its own target (a checkpoint names no folder).
  const made = tempDir();
  const makeCheckpoint = async () => {
    list = fresh();
    failing = true;
    const r = await run(argv(made.path), { env: env(made.path) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('3 complete pages (30 referrals) are kept');
    failing = false;
  };
  afterAll(async () => {
    made.cleanup();
    rmSync(`${made.path}-config`, { recursive: true, force: true });
    await server.close();
  });
  beforeEach(() => {
    list = fresh();
    const cp = join(dir.path, '.out.ndjson.checkpoint');
    cpSync(join(made.path, '.out.ndjson.checkpoint'), cp, { recursive: true, preserveTimestamps: true });
    chmodSync(cp, 0o700);
    for (const f of readdirSync(cp)) chmodSync(join(cp, f), 0o600);
    server.seen.length = 0;
  });

  it('unchanged: pages 4 and 5 only, the same file as a clean export', async () => {
    const r = await run([...argv(), '--resume'], { env: env() });
    expect(r.code).toBe(0);
    expect(pagesSeen()).toEqual([4, 5]);
    const ids = readFileSync(join(dir.path, 'out.ndjson'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual(list.map((r) => r.id));
  });

  it.for<[string, () => void, RegExp]>([
    [
      'a referral added before the seam (page 4 holds one already written)',
      () => list.unshift({ id: uuid(999), reference: 'R-new' }),
      /page 4 holds 1 referral already written; the API now reports 51 referrals, not 50/,
    ],
    [
      'a referral removed before the seam',
      () => list.splice(3, 1),
      /the API now reports 49 referrals, not 50/,
    ],
    [
      'a referral moved from after the seam to the front (same count)',
      () => list.unshift(...list.splice(44, 1)),
      /page 4 holds 1 referral already written\)/,
    ],
    [
      'the order reversed (same count, none of page 3 on page 4)',
      () => list.reverse(),
      /page 4 holds 10 referrals already written\)/,
    ],
  ])('%s: exit 1, nothing written twice or missed, the checkpoint removed', async ([, change, message]) => {
    change();
    const r = await run([...argv(), '--resume'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the referral list changed since the checkpoint was saved');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('run the export again without --resume');
    expect(pagesSeen()).toEqual([4]);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});

describe('real failures on the real binary', () => {
  // Slow only while a real process must be caught between pages; clean and resumed
  // exports run at full speed.
  const slow = mockFixture({ referrals: 400 });
  beforeAll(async () => {
    await slow.start();
    configureSandbox(slow.configDir, slow.mock.url);
  });
  afterEach(() => slow.setLatency(0));
  afterAll(async () => {
    await slow.stop();
    if (disk.error) return;
    execFileSync('umount', [disk.path]);
    rmSync(join(disk.path, '..'), { recursive: true, force: true });
  });
  const slowEnv = () => slow.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-resume-suite' });
  // The clean export both resumed files are compared with (the same options, the emulator only read),
  // made once at full speed.
  const cleanArgs = ['--per-page', '20', '--concurrency', '1'];
  let cleanRun: Promise<Buffer> | undefined;
  const cleanExport = () => (cleanRun ??= clean(cleanArgs, slowEnv()));
  const waitFor = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setTimeout(r, 10));
  };
  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

  it('Ctrl-C (a real SIGINT) mid-export keeps a checkpoint; --resume completes it byte-identically', async () => {
    const args = cleanArgs;
    const expected = await cleanExport();
    slow.reset();
    slow.setLatency(60);
    const target = join(dir.path, 'referrals.csv');
    const child = spawn(process.execPath, [BIN, 'referrals', 'export', ...args, '-o', target], {
      env: { ...slowEnv(), PATH: process.env.PATH },
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = exitOf(child);
    // Page 5 asked for: pages 1-4 have been written.
    await waitFor(() => slow.apiRequests().length >= 5);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    slow.setLatency(0);
    expect(stderr).toContain('interrupted');
    const saved = Number(
      /(\d+) complete pages? \(\d+ referrals?\) (is|are) kept in a checkpoint/.exec(stderr)?.[1],
    );
    expect(saved).toBeGreaterThanOrEqual(4);
    expect(stderr).toContain(`To continue: imaging referrals export ${args.join(' ')} -o ${target} --resume`);
    noStack(stderr);
    expect(readdirSync(dir.path)).toEqual(['.referrals.csv.checkpoint']);
    slow.reset();
    const resumed = await run(['referrals', 'export', ...args, '-o', target, '--resume'], { env: slowEnv() });
    expect(resumed.code).toBe(0);
    expect(readFileSync(target).equals(expected)).toBe(true);
    const asked = slow.apiRequests().map((r) => Number(new URL(r.path, 'http://x').searchParams.get('page')));
    expect(asked[0]).toBe(saved + 1);
    expect(readdirSync(dir.path)).toEqual(['referrals.csv']);
  });

  it('Ctrl-C where checkpoints are off (local): nothing kept, and the note says --resumable would have kept them', async () => {
    const target = join(dir.path, 'local.csv');
    slow.reset();
    slow.setLatency(60);
    const child = spawn(
      process.execPath,
      [BIN, 'referrals', 'export', '--per-page', '20', '--concurrency', '1', '-o', target],
      { env: { ...slow.env(), PATH: process.env.PATH } },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = exitOf(child);
    await waitFor(() => slow.apiRequests().length >= 3);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('interrupted');
    expect(stderr).toContain(
      '(Started with --resumable, its complete pages would have been kept for --resume.)',
    );
    expect(readdirSync(dir.path).filter((n) => n.includes('local.csv'))).toEqual([]);
  });

  const disk = (() => {
    const path = join(tmpfsFolder('resume').path, 'disk');
    mkdirSync(path);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', path], { stdio: 'pipe' });
      return { path, error: undefined };
    } catch (err) {
      rmSync(join(path, '..'), { recursive: true, force: true });
      return { path, error: String((err as { stderr?: Buffer }).stderr ?? err).trim() };
    }
  })();
  it.skipIf(disk.error !== undefined)(
    `a full disk (a real 64 KiB tmpfs) mid-export keeps a consistent checkpoint; with room again, --resume completes it${disk.error ? ` (skipped: ${disk.error})` : ''}`,
    async () => {
      const args = cleanArgs;
      const expected = await cleanExport();
      expect(expected.length).toBeGreaterThan(96 * 1024);
      const target = join(disk.path, 'referrals.csv');
      const child = spawn(process.execPath, [BIN, 'referrals', 'export', ...args, '-o', target], {
        env: { ...slowEnv(), PATH: process.env.PATH },
      });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      expect(await exitOf(child)).toBe(1);
      expect(stderr).toContain('no space left on the device');
      const saved = Number(
        /(\d+) complete pages? \(\d+ referrals?\) (is|are) kept in a checkpoint/.exec(stderr)?.[1],
      );
      expect(saved).toBeGreaterThanOrEqual(1);
      expect(readdirSync(disk.path)).toEqual(['.referrals.csv.checkpoint']);
      // Consistent: the data is exactly the first `saved` pages of a clean export, as its state says.
      const cp = join(disk.path, '.referrals.csv.checkpoint');
      const state = JSON.parse(readFileSync(join(cp, 'state.json'), 'utf8'));
      const partial = readFileSync(join(cp, 'data.partial'));
      expect(state.pages).toBe(saved);
      expect(state.bytes).toBe(partial.length);
      expect(expected.subarray(0, partial.length).equals(partial)).toBe(true);
      expect(state.summary.referrals).toBe(saved * 20);
      execFileSync('mount', ['-o', 'remount,size=4m', disk.path]);
      const resumed = await run(['referrals', 'export', ...args, '-o', target, '--resume'], {
        env: slowEnv(),
      });
      expect(resumed.code).toBe(0);
      expect(readFileSync(target).equals(expected)).toBe(true);
      expect(readdirSync(disk.path)).toEqual(['referrals.csv']);
    },
  );
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

describe('--dry-run --resume', () => {
  /**
   * `referrals export --dry-run --resume -o F` reports what the resume would cost, from the
   * checkpoint (checked as --resume checks it), not what a whole export would. Seen: a checkpoint of
   * 25 pages of 30, the dry run said 30 requests and "would stop with exit 6" where the resume
   * needed 5 and went through. A real checkpoint, made by a real fault on page 26: made once, and
   * each test given a copy of it beside its own target (a checkpoint names no folder or token).
   */

  const fx = mockFixture({ referrals: 300 });

  const args = ['referrals', 'export', '--per-page', '10', '--concurrency', '1'];

  const made = tempDir();

  beforeAll(async () => {
    await fx.start();
    configureSandbox(fx.configDir, fx.mock.url);
    const env = fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-dry-resume-${process.pid}-0` });
    fx.mock.faults.add(parseFault('500:*@25', '/api/v2/referrals')); // pages 1-25 answered, 26 fails
    const failed = await run([...args, '-o', join(made.path, 'out.csv')], { env });
    fx.mock.faults.clear();
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('25 complete pages (250 referrals) are kept in a checkpoint');
  });

  afterAll(async () => {
    made.cleanup();
    await fx.stop();
  });

  let dir: ReturnType<typeof tempDir>;

  let target: string;

  let n = 0;

  let env: NodeJS.ProcessEnv;

  const pagesAsked = () =>
    fx
      .apiRequests()
      .filter((r) => r.path.startsWith('/api/v2/referrals?'))
      .map((r) => Number(new URL(r.path, 'http://x').searchParams.get('page')));

  beforeEach(async () => {
    dir = tempDir();
    target = join(dir.path, 'out.csv');
    env = fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-dry-resume-${process.pid}-${++n}` });
    // The checkpoint as the failed export left it: owner-only folder and files, the same times.
    const cp = join(dir.path, '.out.csv.checkpoint');
    cpSync(join(made.path, '.out.csv.checkpoint'), cp, { recursive: true, preserveTimestamps: true });
    chmodSync(cp, 0o700);
    for (const f of readdirSync(cp)) chmodSync(join(cp, f), 0o600);
    fx.reset();
  });

  afterEach(() => dir.cleanup());

  const checkpointFiles = () => {
    const cp = join(dir.path, '.out.csv.checkpoint');
    return readdirSync(cp).map(
      (f) => `${f}:${statSync(join(cp, f)).mtimeMs}:${readFileSync(join(cp, f)).length}`,
    );
  };

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

describe('--resume-or-start (a nightly job: resume if there is a checkpoint, else start)', () => {
  const args = ['--per-page', '10', '--concurrency', '1'];

  it('without a checkpoint it starts, keeping one as --resumable does; run again, it resumes to a byte-identical file', async () => {
    // The local environment keeps no checkpoint by default: only the flag makes this one.
    const expected = await clean(args, fx.env());
    fx.reset();
    const target = join(dir.path, 'nightly.csv');
    const command = ['referrals', 'export', ...args, '-o', target, '--resume-or-start'];
    inject('500:*@5');
    const first = await run(command, { env: fx.env() });
    expect(first.code).toBe(1);
    expect(pagesAsked()[0]).toBe(1);
    expect(first.stderr).toContain('5 complete pages (50 referrals) are kept in a checkpoint');
    // The same command continues it.
    expect(first.stderr).toContain(`To continue: imaging ${command.join(' ')}\n`);
    expect(readdirSync(dir.path)).toEqual(['.nightly.csv.checkpoint']);

    fx.mock.faults.clear();
    fx.reset();
    const again = await run(command, { env: fx.env() });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Continued from the checkpoint: 5 pages saved earlier, 7 fetched now.');
    expect(pagesAsked()).toEqual([6, 7, 8, 9, 10, 11, 12]);
    expect(readFileSync(target).equals(expected)).toBe(true);
    expect(readdirSync(dir.path)).toEqual(['nightly.csv']);

    // Nothing left to continue: the next night starts afresh, and says nothing about a checkpoint.
    fx.reset();
    const next = await run(command, { env: fx.env() });
    expect(next.code).toBe(0);
    expect(next.stderr).not.toContain('checkpoint');
    expect(pagesAsked()[0]).toBe(1);
    expect(readFileSync(target).equals(expected)).toBe(true);
  });

  it("another export's or an expired checkpoint is not continued: it says so and starts afresh", async () => {
    const target = join(dir.path, 'nightly.csv');
    inject('500:*@3');
    const other = await run(
      ['referrals', 'export', '--per-page', '20', '--concurrency', '1', '-o', target, '--resumable'],
      {
        env: fx.env(),
      },
    );
    expect(other.code).toBe(1);
    fx.mock.faults.clear();
    const expected = await clean(args, fx.env());
    fx.reset();
    const r = await run(['referrals', 'export', ...args, '-o', target, '--resume-or-start'], {
      env: fx.env(),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /--resume-or-start: the checkpoint of .*nightly\.csv is of another export: .*; starting afresh, which removes it\./,
    );
    expect(pagesAsked()[0]).toBe(1);
    expect(readFileSync(target).equals(expected)).toBe(true);
    expect(readdirSync(dir.path)).toEqual(['nightly.csv']);

    // Expired (saved two days before the clock says now): removed, then a fresh start.
    inject('500:*@3');
    expect(
      (await run(['referrals', 'export', ...args, '-o', target, '--resumable'], { env: fx.env() })).code,
    ).toBe(1);
    fx.mock.faults.clear();
    fx.reset();
    const later = new Date(Date.now() + 48 * 3600_000);
    const old = await run(['referrals', 'export', ...args, '-o', target, '--resume-or-start'], {
      env: fx.env(),
      deps: { now: () => later },
    });
    expect(old.code).toBe(0);
    expect(old.stderr).toMatch(
      /--resume-or-start: the checkpoint of .* expired .* and was removed; starting afresh\./,
    );
    expect(pagesAsked()[0]).toBe(1);
    expect(readFileSync(target).equals(expected)).toBe(true);
  });

  it('refuses --resume with it, and needs -o FILE, before any request', async () => {
    const both = await run(
      ['referrals', 'export', '-o', join(dir.path, 'x.csv'), '--resume', '--resume-or-start'],
      {
        env: fx.env(),
      },
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('pick one');
    const stdout = await run(['referrals', 'export', '--resume-or-start'], { env: fx.env() });
    expect(stdout.code).toBe(2);
    expect(stdout.stderr).toContain('--resume-or-start needs -o FILE');
    expect(pagesAsked()).toEqual([]);
  });
});
