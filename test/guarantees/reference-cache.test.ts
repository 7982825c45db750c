import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cacheable } from '../../src/cache/reference.js';
import { BIN, json, mockFixture, ROOT, run, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * The reference-data cache, against the emulator, whose request log shows what
 * was sent: a hit sends nothing, keys and time limits, --no-cache and --refresh, entries that
 * cannot be trusted, the allow-list (nothing else is ever written), and that a hit never loads
 * node:http.
 */

const fx = mockFixture({ referrals: 250 });
const root = tempDir('imaging-cache-test-');
let n = 0;
/** A fresh cache folder (IMAGING_CACHE_DIR) for each test. */
let cacheDir = '';
const entriesDir = () => join(cacheDir, 'reference');
const entries = () =>
  existsSync(entriesDir()) ? readdirSync(entriesDir()).filter((f) => f.endsWith('.json')) : [];
const HOUR = 3_600_000;

beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  root.cleanup();
});
beforeEach(() => {
  fx.reset();
  cacheDir = join(root.path, `c${++n}`);
});

const env = (extra: NodeJS.ProcessEnv = {}) => fx.env({ IMAGING_CACHE_DIR: cacheDir, ...extra });
/** Runs in-process at a given offset from now (the cache's clock is the context's). */
const at = (argv: string[], offsetMs = 0, extra: NodeJS.ProcessEnv = {}) =>
  run(argv, { env: env(extra), deps: { now: () => new Date(Date.now() + offsetMs) } });

describe('a cached lookup sends no request', () => {
  it.for<[string[]]>([
    [['modalities']],
    [['body-parts', '--modality', 'MRI']],
    [['cpt', '73721']],
    [['icd10', 'knee']],
    [['icd10', 'knee', '--per-page', '5', '--all']],
  ])('%j: the second run answers from the cache, byte for byte', async ([argv]) => {
    for (const format of [[], ['--json']]) {
      fx.reset();
      cacheDir = join(root.path, `c${++n}`);
      const first = await at([...argv, ...format]);
      expect(first.code).toBe(0);
      const sent = fx.apiRequests().length;
      expect(sent).toBeGreaterThan(0);
      const second = await at([...argv, ...format]);
      expect(second.code).toBe(0);
      expect(fx.apiRequests()).toHaveLength(sent); // nothing more reached the emulator
      expect(second.stdout).toBe(first.stdout);
      expect(second.stderr).toBe(first.stderr);
    }
  });

  it('--verbose says "cache hit (age …)" instead of the request and answer lines', async () => {
    await at(['cpt', '73721']);
    const r = await at(['cpt', '73721', '--verbose'], 125_000);
    expect(r.stderr).toMatch(
      /^\* cache hit \(age 2 min\): GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/cpt_codes\?code=73721$/m,
    );
    expect(r.stderr).not.toMatch(/^> GET/m);
    expect(fx.apiRequests()).toHaveLength(1);
  });

  it('entries are keyed by origin, token and query: another of any sends its own request', async () => {
    await at(['cpt', '73721']);
    await at(['cpt', '73722']); // another query
    await at(['cpt', '73721'], 0, { IMAGING_TOKEN: 'mock-another-token' }); // another token
    await at(['cpt', '73721'], 0, { IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost') }); // another origin
    expect(fx.apiRequests()).toHaveLength(4);
    expect(entries()).toHaveLength(4);
    await at(['cpt', '73721'], 0, { IMAGING_TOKEN: 'mock-another-token' });
    expect(fx.apiRequests()).toHaveLength(4);
  });

  it('time limits: a day for modalities, body parts and CPT, an hour for ICD-10 pages', async () => {
    await at(['cpt', '73721']);
    await at(['icd10', 'knee']);
    expect(fx.apiRequests()).toHaveLength(2);
    await at(['cpt', '73721'], HOUR + 60_000);
    expect(fx.apiRequests()).toHaveLength(2); // CPT still fresh after an hour
    await at(['icd10', 'knee'], HOUR + 60_000);
    expect(fx.apiRequests()).toHaveLength(3); // ICD-10 is not: fetched and stored anew
    await at(['cpt', '73721'], 24 * HOUR + 60_000);
    expect(fx.apiRequests()).toHaveLength(4); // CPT after a day
    // An entry from the future (the clock went back) is not trusted either.
    await at(['modalities'], 0);
    await at(['modalities'], -HOUR);
    expect(fx.apiRequests()).toHaveLength(6);
  });

  it('--no-cache neither reads nor writes; --refresh fetches and stores anew', async () => {
    await at(['modalities', '--no-cache']);
    expect(entries()).toEqual([]);
    await at(['modalities']);
    const [file] = entries();
    const before = readFileSync(join(entriesDir(), file!));
    await at(['modalities', '--no-cache']);
    expect(fx.apiRequests()).toHaveLength(3);
    await at(['modalities', '--refresh'], 60_000);
    expect(fx.apiRequests()).toHaveLength(4);
    const after = readFileSync(join(entriesDir(), file!));
    expect(after.equals(before)).toBe(false); // stored anew: a later time, the new request id
    await at(['modalities'], 60_000);
    expect(fx.apiRequests()).toHaveLength(4);
    const both = await at(['modalities', '--no-cache', '--refresh']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^error: --no-cache and --refresh cannot be used together/m);
  });

  it('files are 0600 in a 0700 folder beside the code cache, hold no token, and `cache clear` leaves the code cache alone', async () => {
    const token = 'mock-CACHE-LEAK-CHECK-77aa';
    await at(['body-parts'], 0, { IMAGING_TOKEN: token });
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(entriesDir()).mode & 0o777).toBe(0o700);
    for (const f of entries()) {
      expect(statSync(join(entriesDir(), f)).mode & 0o777).toBe(0o600);
      const text = readFileSync(join(entriesDir(), f), 'utf8');
      expect(text).not.toContain(token);
      expect(text).not.toContain(token.slice(5, 20));
    }
    mkdirSync(join(cacheDir, 'compile-cache'), { mode: 0o700 });
    writeFileSync(join(cacheDir, 'compile-cache', 'code-x.v8'), 'x', { mode: 0o600 });
    const path = await at(['cache', 'path']);
    expect(path.stdout).toBe(`${entriesDir()}\n`);
    const clear = await at(['cache', 'clear']);
    expect(clear.code).toBe(0);
    expect(clear.stderr).toBe('Removed 1 cached answer.\n');
    expect(entries()).toEqual([]);
    expect(readdirSync(join(cacheDir, 'compile-cache'))).toEqual(['code-x.v8']);
    await at(['body-parts'], 0, { IMAGING_TOKEN: token });
    expect(fx.apiRequests()).toHaveLength(2);
  });
});

it('an entry past every time limit (a day and an hour by its file time) is deleted when another is written', async () => {
  await at(['cpt', '73721']);
  const old = join(entriesDir(), entries()[0]!);
  const past = (Date.now() - 26 * HOUR) / 1000;
  utimesSync(old, past, past);
  await at(['cpt', '73722']);
  expect(existsSync(old)).toBe(false);
  expect(entries()).toHaveLength(1);
});

it('no usable location: `cache path` says why (exit 1); lookups still work, uncached', async () => {
  const rel = await run(['cache', 'path'], { env: fx.env({ IMAGING_CACHE_DIR: 'relative/dir' }) });
  expect(rel.code).toBe(1);
  expect(rel.stderr).toMatch(/^error: IMAGING_CACHE_DIR is not an absolute path/m);
  const none = await run(['cache', 'path'], { env: fx.env() }); // no HOME, no IMAGING_CACHE_DIR
  expect(none.code).toBe(1);
  expect(none.stderr).toMatch(/^error: there is no cache folder on this system/m);
  for (let i = 0; i < 2; i++) expect((await run(['modalities'], { env: fx.env() })).code).toBe(0);
  expect(fx.apiRequests()).toHaveLength(2);
});

describe('entries that cannot be trusted are ignored and replaced, never a crash', () => {
  /** Stores the CPT answer, then lets `spoil` change its file; the next run must fetch again. */
  const spoiled = async (spoil: (file: string) => void) => {
    const before = entries();
    const clean = await at(['cpt', '73721', '--json']);
    const file = join(entriesDir(), entries().find((f) => !before.includes(f))!);
    spoil(file);
    const r = await at(['cpt', '73721', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(clean.stdout);
    expect(fx.apiRequests()).toHaveLength(2);
    // Replaced by a good entry of ours: the third run is a hit.
    const st = lstatSync(file);
    expect(st.isFile()).toBe(true);
    expect(st.uid).toBe(process.getuid!());
    expect(st.mode & 0o777).toBe(0o600);
    await at(['cpt', '73721', '--json']);
    expect(fx.apiRequests()).toHaveLength(2);
    return file;
  };

  it('cut short', () => spoiled((f) => truncateSync(f, statSync(f).size - 7)));
  it('one byte of the body changed (same length)', () =>
    spoiled((f) => {
      const b = readFileSync(f);
      b.writeUInt8(b.readUInt8(b.length - 3) ^ 0x01, b.length - 3);
      writeFileSync(f, b);
    }));
  it('a damaged header', () => spoiled((f) => writeFileSync(f, `{"v":1,${readFileSync(f, 'utf8')}`)));
  it('empty', () => spoiled((f) => truncateSync(f, 0)));
  it('readable by others (0644)', () => spoiled((f) => chmodSync(f, 0o644)));
  it('owned by another user (nobody)', () => spoiled((f) => chownSync(f, 65534, 65534)));
  it('a symlink to a valid copy of itself (only O_NOFOLLOW refuses it)', () =>
    spoiled((f) => {
      const copy = join(root.path, `copy${n}.json`);
      copyFileSync(f, copy);
      chmodSync(copy, 0o600);
      rmSync(f);
      symlinkSync(copy, f);
    }));
  it('a FIFO (no hang)', () =>
    spoiled((f) => {
      rmSync(f);
      execFileSync('mkfifo', [f]);
    }));
  it('a folder at its name: never a crash, the answer is simply not kept', async () => {
    await at(['cpt', '73721']);
    const file = join(entriesDir(), entries()[0]!);
    rmSync(file);
    mkdirSync(file);
    for (let i = 0; i < 2; i++) expect((await at(['cpt', '73721'])).code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(3);
  });
  it('a cache folder that is not private (0777 above it, or not 0700 itself) is not used at all', async () => {
    const open = join(root.path, `open${n}`);
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    cacheDir = join(open, 'c');
    for (let i = 0; i < 2; i++) expect((await at(['modalities'])).code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(2);
    expect(existsSync(cacheDir)).toBe(false);
    const path = await at(['cache', 'path']);
    expect(path.stderr).toMatch(/^Note: the cache is not used: .* is writable by others\.$/m);
    cacheDir = join(root.path, `loose${n}`);
    mkdirSync(join(cacheDir, 'reference'), { recursive: true, mode: 0o755 });
    chmodSync(join(cacheDir, 'reference'), 0o755);
    for (let i = 0; i < 2; i++) expect((await at(['modalities'])).code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(4);
    expect(readdirSync(join(cacheDir, 'reference'))).toEqual([]);
  });
  it('a `reference` folder that is a symlink (even to a private folder of valid entries) is not used', async () => {
    await at(['modalities']);
    const real = join(root.path, `real${n}`);
    cpSync(entriesDir(), real, { recursive: true, preserveTimestamps: true });
    chmodSync(real, 0o700);
    rmSync(entriesDir(), { recursive: true });
    symlinkSync(real, entriesDir());
    for (let i = 0; i < 2; i++) expect((await at(['modalities'])).code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(3);
    const path = await at(['cache', 'path']);
    expect(path.stderr).toMatch(/^Note: the cache is not used: .*reference is a symbolic link\.$/m);
  });
  it('an answer the command could not read is not kept (it would fail every run for a day)', async () => {
    const srv = await testServer((_req, res) => json(res, 200, 'not a list'));
    try {
      for (let i = 0; i < 2; i++) {
        const r = await at(['modalities'], 0, { IMAGING_BASE_URL: srv.url });
        expect(r.code).toBe(1);
      }
      expect(srv.seen).toHaveLength(2);
      expect(entries()).toEqual([]);
    } finally {
      await srv.close();
    }
  });
});

describe('an answer that echoes the token is never written to disk', () => {
  const escaped = (t: string) =>
    [...t].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const answers: Array<[string, (token: string) => [string, Record<string, string>]]> = [
    ['as text in the body', (t) => [`[{"id":1,"name":"echo ${t}"}]`, {}]],
    ['as JSON escapes in the body', (t) => [`[{"id":1,"name":"${escaped(t)}"}]`, {}]],
    ['in X-Request-Id', (t) => ['[{"id":1,"name":"MRI"}]', { 'x-request-id': t }]],
    ['in Content-Type', (t) => ['[{"id":1,"name":"MRI"}]', { 'content-type': `application/json; x=${t}` }]],
  ];
  it.each(answers)(
    'a server that echoes the token %s is asked again, and no entry holds it',
    async (_how, answer) => {
      const srv = await testServer((req, res) => {
        const [body, headers] = answer(String(req.headers.authorization).slice(7));
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(body);
      });
      try {
        for (let i = 0; i < 2; i++)
          expect((await at(['modalities'], 0, { IMAGING_BASE_URL: srv.url })).code).toBe(0);
        expect(srv.seen).toHaveLength(2);
        expect(entries()).toEqual([]);
      } finally {
        await srv.close();
      }
    },
  );
});

describe('nothing else is ever cached', () => {
  it('only the four reference paths are on the allow-list', () => {
    for (const p of ['/modalities', '/body_parts', '/cpt_codes', '/icd10_codes'])
      expect(cacheable(p)).toBe(true);
    for (const p of [
      '/referrals',
      '/patients',
      '/payments',
      '/notifications',
      '/sso',
      '/law_firms',
      '/modalities/1',
    ])
      expect(cacheable(p)).toBe(false);
  });

  it('referrals, sso, law firms, `imaging api` (even GET /modalities) and exports write no cache file', async () => {
    const list = await at(['referrals', 'list', '--json']);
    const id = JSON.parse(list.stdout)[0].id as string;
    const out = join(root.path, `export${n}.csv`);
    for (const argv of [
      ['referrals', 'get', id],
      ['referrals', 'list', '--all'],
      ['referrals', 'export', '-o', out],
      ['sso'],
      ['law-firms', 'search', 'law'],
      ['api', 'GET', '/modalities'],
      ['api', '/cpt_codes?code=73721'],
      ['api', `/referrals/${id}`],
    ]) {
      const r = await at(argv);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(entries()).toEqual([]);
    // `imaging api` is raw: asked twice, sent twice.
    fx.reset();
    await at(['api', 'GET', '/modalities']);
    await at(['api', 'GET', '/modalities']);
    expect(fx.apiRequests()).toHaveLength(2);
  });
});

describe('what a typical day costs with and without the cache', () => {
  // Two batches of referral entry (09:00 and 14:00, one referral every 5 minutes: 12 then 13), each
  // starting with `imaging modalities`; per referral a body-parts list for its modality, its CPT
  // code's mappings and an ICD-10 search; at 17:00 one export of the 250 referrals (3 pages).
  const MODALITIES = ['MRI', 'CT', 'X-Ray'];
  const CPT = ['73721', '72148', '73221', '70450', '73030', '72141'];
  const ICD = ['knee', 'lumbar', 'shoulder', 'neck'];
  const day = async (extra: string[]) => {
    const nine = new Date('2026-11-23T09:00:00Z').getTime() - Date.now();
    const lookups: Array<[string[], number]> = [];
    for (const [start, count] of [
      [0, 12],
      [5 * HOUR, 13],
    ] as const) {
      lookups.push([['modalities'], start]);
      for (let i = 0; i < count; i++) {
        const t = start + i * 5 * 60_000;
        lookups.push([['body-parts', '--modality', MODALITIES[i % 3]!], t]);
        lookups.push([['cpt', CPT[i % 6]!], t]);
        lookups.push([['icd10', ICD[i % 4]!], t]);
      }
    }
    for (const [argv, t] of lookups) expect((await at([...argv, ...extra], nine + t)).code).toBe(0);
    const forLookups = fx.apiRequests().length;
    const out = join(root.path, `day${n}.csv`);
    expect((await at(['referrals', 'export', '-o', out, ...extra], nine + 8 * HOUR)).code).toBe(0);
    return { commands: lookups.length + 1, lookups: forLookups, total: fx.apiRequests().length };
  };

  it('77 lookups and one export: 105 requests without the cache, 22 with it', async () => {
    const without = await day(['--no-cache']);
    fx.reset();
    const withCache = await day([]);
    // Without the cache each body-parts --modality NAME also reads the modalities (to check the name).
    expect(without).toEqual({ commands: 78, lookups: 102, total: 105 });
    // modalities 1, body parts 3 (one per modality), CPT 6 (one per code), ICD-10 9 (4 a batch, and
    // "knee" at 15:00 again, its 14:00 answer an hour old), the export's 3 pages as before.
    expect(withCache).toEqual({ commands: 78, lookups: 19, total: 22 });
  });
});

describe('the real binary', () => {
  it('a hit sends nothing (emulator log) and never loads node:http; a miss does', async () => {
    // A preload that, on exit, writes which HTTP modules the process loaded (not net: a piped stdout
    // is a net.Socket).
    const probe = join(root.path, 'probe.cjs');
    const seen = join(root.path, 'modules.json');
    writeFileSync(
      probe,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (http|https|_http_client|_http_agent|tls)$/.test(m)))));`,
    );
    const go = async () => {
      const r = await execa(process.execPath, ['-r', probe, BIN, 'cpt', '73721', '--json'], {
        env: { ...env(), NO_COLOR: '1' },
        extendEnv: false,
        reject: false,
        cwd: ROOT,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      return { stdout: r.stdout, modules: JSON.parse(readFileSync(seen, 'utf8')) as string[] };
    };
    const miss = await go();
    expect(fx.apiRequests()).toHaveLength(1);
    expect(miss.modules).toContain('NativeModule http');
    const hit = await go();
    expect(fx.apiRequests()).toHaveLength(1);
    expect(hit.stdout).toBe(miss.stdout);
    expect(hit.modules).toEqual([]);
  });

  it('--no-cache and --refresh are global options (before the command too)', async () => {
    const a = await spawnCli(['--refresh', 'modalities'], { env: env() });
    const b = await spawnCli(['--no-cache', 'modalities'], { env: env() });
    const c = await spawnCli(['modalities'], { env: env() });
    expect([a.exitCode, b.exitCode, c.exitCode]).toEqual([0, 0, 0]);
    expect(fx.apiRequests()).toHaveLength(2);
  });
});

describe('cache clear and the sweep delete only what the cache made', () => {
  /**
   * The reference cache deletes only what it wrote. Seen: the sweep after a new entry removed every
   * `*.json` older than 25 hours in the cache's `reference/` folder, and `imaging cache clear` every
   * `*.json`, a user's report.json or backup.json included. Real files in a real cache folder.
   */

  const fx = mockFixture();

  const root = tempDir('imaging-cache-foreign-');

  beforeAll(() => fx.start());

  afterAll(async () => {
    await fx.stop();
    root.cleanup();
  });

  const HOUR = 3_600_000;

  const old = (file: string, hours: number) => {
    const t = new Date(Date.now() - hours * HOUR);
    utimesSync(file, t, t);
  };

  it('the sweep and `cache clear` remove our entries and temporary files, never a report.json, a backup.json or a notes.txt', async () => {
    const cacheDir = join(root.path, 'c');
    const dir = join(cacheDir, 'reference');
    const env = fx.env({ IMAGING_CACHE_DIR: cacheDir });
    expect((await run(['modalities'], { env })).code).toBe(0);
    const [ours] = readdirSync(dir);
    expect(ours).toMatch(/^[0-9a-f]{64}\.json$/);
    old(join(dir, ours!), 26); // past every time limit: the sweep's to remove
    const foreign = {
      'report.json': 0,
      'backup.json': 30,
      'notes.txt': 30,
      '.tmp-backup.json': 30,
      'ABCDEF.json': 30,
    };
    for (const [name, hours] of Object.entries(foreign)) {
      writeFileSync(join(dir, name), '{"mine": true}\n', { mode: 0o600 });
      old(join(dir, name), hours);
    }
    // A folder named as an entry is not a file of ours either.
    const folderLikeEntry = join(dir, `${'a'.repeat(64)}.json`);
    mkdirSync(folderLikeEntry);
    old(folderLikeEntry, 30);
    const tmp = join(dir, '.tmp-4242-k3j2h1'); // a temporary file a killed run left, 2 hours old
    writeFileSync(tmp, 'x', { mode: 0o600 });
    old(tmp, 2);

    // A new entry is written: the sweep runs.
    expect((await run(['cpt', '73721'], { env })).code).toBe(0);
    expect(existsSync(join(dir, ours!))).toBe(false);
    expect(existsSync(tmp)).toBe(false);
    const afterSweep = readdirSync(dir);
    for (const name of Object.keys(foreign)) expect(afterSweep).toContain(name);
    expect(afterSweep).toContain(`${'a'.repeat(64)}.json`);
    const entries = afterSweep.filter(
      (f) => /^[0-9a-f]{64}\.json$/.test(f) && f !== `${'a'.repeat(64)}.json`,
    );
    expect(entries).toHaveLength(1); // the cpt answer

    const clear = await run(['cache', 'clear'], { env });
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stderr).toBe('Removed 1 cached answer.\n');
    expect(readdirSync(dir).sort()).toEqual([...Object.keys(foreign), `${'a'.repeat(64)}.json`].sort());
  });
});
