import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, mockFixture, run, json as sendJson, tempDir, testServer } from '../helpers.js';

/**
 * Issue 9, items 4-9: the input people get wrong, recreated against the emulator: a status typo
 * that gave a silent empty export, upper-case UUIDs that found nothing, HCPCS codes refused, a
 * page past the end reported as "no match", a file name whose extension was ignored, and a
 * target the user cannot write.
 */

const fx = mockFixture({ referrals: 300 });
let dir: ReturnType<typeof tempDir>;

beforeAll(async () => {
  await fx.start();
});
afterAll(async () => {
  await fx.stop();
});
beforeEach(() => {
  dir = tempDir();
  fx.reset();
});
afterEach(() => dir.cleanup());

const exportTo = (name: string, ...extra: string[]) =>
  run(['referrals', 'export', '-o', join(dir.path, name), ...extra], { env: fx.env() });

describe('--visit-status (item 4)', () => {
  it('a typo is exit 2 before any request, naming the nearest status; the old file stays', async () => {
    const target = join(dir.path, 'x.csv');
    writeFileSync(target, 'yesterday\n');
    const r = await exportTo('x.csv', '--visit-status', 'boked');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown visit status "boked"; did you mean "booked"?');
    expect(r.stderr).toContain('prefix it with +');
    expect(fx.apiRequests()).toHaveLength(0);
    expect(readFileSync(target, 'utf8')).toBe('yesterday\n');
  });

  it('matches any case and - for _: BOOKED and Ready-To-Book find the rows booked,ready_to_book finds', async () => {
    const lower = await exportTo('a.csv', '--visit-status', 'booked,ready_to_book', '--rows', 'visit');
    const upper = await exportTo('b.csv', '--visit-status', 'BOOKED, Ready-To-Book', '--rows', 'visit');
    expect(lower.code).toBe(0);
    expect(upper.code).toBe(0);
    const a = readFileSync(join(dir.path, 'a.csv'), 'utf8');
    expect(a.split('\r\n').length).toBeGreaterThan(3);
    expect(readFileSync(join(dir.path, 'b.csv'), 'utf8')).toBe(a);
  });

  it('a status newer than the tool passes with +, and an export that wrote no row warns', async () => {
    const r = await exportTo('x.csv', '--visit-status', '+awaiting_review');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Exported 0 referral rows \(csv\) from 300 referrals read in 3 pages/);
    expect(r.stderr).toContain(
      'warning: 300 referrals were read but no row was written (no visit has status awaiting_review): the file holds only the header.',
    );
    expect(readFileSync(join(dir.path, 'x.csv'), 'utf8').split('\r\n')).toHaveLength(2);
  });

  it('the summary counts the rows written, not the referrals read', async () => {
    const r = await exportTo('x.csv', '--visit-status', 'booked');
    const written = readFileSync(join(dir.path, 'x.csv'), 'utf8').split('\r\n').length - 2;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(300);
    expect(r.stderr).toMatch(
      new RegExp(`^Exported ${written} referral rows \\(csv\\) from 300 referrals read`),
    );
    expect(r.stderr).not.toContain('Warning');
  });
});

describe('upper-case UUIDs are sent in lower case (item 5)', () => {
  let referralId = '';
  let modalityId = '';
  beforeAll(async () => {
    referralId = (
      JSON.parse((await run(['referrals', 'list', '--json'], { env: fx.env() })).stdout) as Array<{
        id: string;
      }>
    )[0]!.id;
    modalityId = (
      JSON.parse((await run(['modalities', '--json'], { env: fx.env() })).stdout) as Array<{ id: string }>
    )[0]!.id;
  });

  it('referrals get', async () => {
    const r = await run(['referrals', 'get', referralId.toUpperCase(), '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).id).toBe(referralId);
  });

  it('body-parts --modality', async () => {
    const lower = await run(['body-parts', '--modality', modalityId, '--json'], { env: fx.env() });
    const upper = await run(['body-parts', '--modality', modalityId.toUpperCase(), '--json'], {
      env: fx.env(),
    });
    expect(JSON.parse(lower.stdout).length).toBeGreaterThan(0);
    expect(upper.stdout).toBe(lower.stdout);
  });

  it('icd10 --ids and --param values', async () => {
    const first = (
      JSON.parse((await run(['icd10', 'knee', '--json'], { env: fx.env() })).stdout) as Array<{ id: string }>
    )[3]!.id;
    const r = await run(['icd10', '--ids', first.toUpperCase(), '--per-page', '1', '--json'], {
      env: fx.env(),
    });
    expect(JSON.parse(r.stdout)[0].id).toBe(first);
    fx.reset();
    await run(['referrals', 'list', '--param', `ids[]=${referralId.toUpperCase()}`, '--json'], {
      env: fx.env(),
    });
    expect(fx.apiRequests()[0]!.path).toContain(encodeURIComponent(referralId));
    expect(fx.apiRequests()[0]!.path).not.toContain(referralId.toUpperCase());
  });

  it('--param with a comma list of UUIDs: each in lower case, as imaging api sends them', async () => {
    const ids = (
      JSON.parse((await run(['referrals', 'list', '--json'], { env: fx.env() })).stdout) as Array<{
        id: string;
      }>
    )
      .slice(0, 2)
      .map((r) => r.id);
    const upper = ids.map((id) => id.toUpperCase()).join(',');
    const sent = async (argv: string[]) => {
      fx.reset();
      const r = await run(argv, { env: fx.env() });
      expect(r.code, r.stderr).toBe(0);
      return new URL(fx.apiRequests()[0]!.path, 'http://x').searchParams.get('ids');
    };
    expect(await sent(['referrals', 'list', '--param', `ids=${upper}`, '--json'])).toBe(ids.join(','));
    expect(await sent(['referrals', 'export', '--param', `ids=${upper}`, '-o', '/dev/null'])).toBe(
      ids.join(','),
    );
    expect(await sent(['api', 'GET', '/referrals', '-f', `ids=${upper}`])).toBe(ids.join(','));
    // Not every part a UUID: sent as given.
    expect(await sent(['referrals', 'list', '--param', `ids=${ids[0]!.toUpperCase()},ABC`, '--json'])).toBe(
      `${ids[0]!.toUpperCase()},ABC`,
    );
  });
});

describe('CPT and HCPCS codes (item 6)', () => {
  it.for(['G0202', 'g0202', '0001F', '0042T', '73721'])('%s is asked for, not refused', async (code) => {
    const r = await run(['cpt', code, '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(fx.apiRequests().at(-1)!.path).toContain(`code=${code.toUpperCase()}`);
  });

  it('a code that is not five letters or digits says the real rule', async () => {
    const r = await run(['cpt', 'G020'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('A code is five letters or digits');
    expect(r.stderr).toContain('G0202 (HCPCS Level II)');
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('a page past the last one (item 7)', () => {
  const cases: Array<[string, string[], RegExp]> = [
    [
      'icd10',
      ['icd10', 'knee', '--page', '99'],
      /--page 99 is past the last page: the ICD-10 codes have pages 1 to 2 \(\d+ in all\)\./,
    ],
    [
      'referrals list',
      ['referrals', 'list', '--page', '13'],
      /--page 13 is past the last page: the referrals have pages 1 to 12 \(300 in all\)\./,
    ],
    [
      'law-firms search',
      ['law-firms', 'search', 'a', '--page', '50'],
      /--page 50 is past the last page: the law firms have pages 1 to \d+/,
    ],
  ];
  for (const [name, argv, message] of cases) {
    it(`${name}: says so instead of "no match", in a table and in JSON`, async () => {
      const table = await run(argv, { env: fx.env() });
      expect(table.code).toBe(0);
      expect(table.stderr).toMatch(message);
      expect(table.stderr).not.toMatch(/match|Page \d+ of/);
      const json = await run([...argv, '--json'], { env: fx.env() });
      expect(json.stdout).toBe('[]\n');
      expect(json.stderr).toMatch(message);
    });
  }
});

describe('page counts past 999 have thousands separators, as every count in a message', () => {
  it('the page note and the past-the-last-page note of referrals list', async () => {
    // A server with 1,500 pages of one referral each (the emulator's counts stay under 1,000).
    const server = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const past = page > 1500;
      sendJson(res, 200, {
        referrals: past
          ? []
          : [{ id: '8ebc7731-0fe2-467e-8ce2-6b8745680801', reference: 'R-1', status: 'pending' }],
        meta: { current_page: page, total_pages: 1500, total_count: 1500, next_page: past ? null : page + 1 },
      });
    });
    try {
      const env = {
        IMAGING_ENV: 'local',
        IMAGING_BASE_URL: server.url,
        IMAGING_CONFIG_DIR: '/nonexistent/x',
      };
      const first = await run(['referrals', 'list', '--per-page', '1'], { env });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain('Page 1 of 1,500 (1,500 referrals). Next: --page 2, or --all.');
      const past = await run(['referrals', 'list', '--per-page', '1', '--page', '1600'], { env });
      expect(past.stderr).toContain('the referrals have pages 1 to 1,500 (1,500 in all).');
    } finally {
      await server.close();
    }
  });
});

describe('the format follows -o (item 8)', () => {
  it.for([
    ['x.json', (t: string) => expect(JSON.parse(t)).toHaveLength(300)],
    [
      'x.ndjson',
      (t: string) =>
        expect(
          t
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l)),
        ).toHaveLength(300),
    ],
    [
      'x.jsonl',
      (t: string) =>
        expect(
          t
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l)),
        ).toHaveLength(300),
    ],
    ['x.CSV', (t: string) => expect(t.startsWith('referral_id,')).toBe(true)],
    ['x.txt', (t: string) => expect(t.startsWith('referral_id,')).toBe(true)],
  ] as const)('-o %s', async ([name, check]) => {
    const r = await exportTo(name);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('Warning');
    check(readFileSync(join(dir.path, name), 'utf8'));
  });

  it('--format that disagrees with the extension wins, with a warning', async () => {
    const r = await exportTo('x.csv', '--format', 'ndjson');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: writing NDJSON (--format ndjson) into');
    expect(r.stderr).toContain('whose extension says CSV');
    expect(JSON.parse(readFileSync(join(dir.path, 'x.csv'), 'utf8').split('\n')[0]!).id).toBeTruthy();
    const agree = await exportTo('y.json', '--json');
    expect(agree.stderr).not.toContain('Warning');
  });
});

const isRoot = process.getuid?.() === 0;
const hasSetpriv = (() => {
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(isRoot && !hasSetpriv)('a target the user cannot write (item 9, as a non-root user)', () => {
  /** The real binary as `nobody` (as root, through setpriv), or as the user running the tests. */
  const asUser = (args: string[]) => {
    const argv = [process.execPath, BIN, ...args];
    const [cmd, ...rest] = isRoot
      ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...argv]
      : argv;
    return execa(cmd!, rest, {
      reject: false,
      extendEnv: false,
      env: {
        ...fx.env(),
        IMAGING_CONFIG_DIR: join(dir.path, 'config'),
        NO_COLOR: '1',
        PATH: process.env.PATH,
      },
      timeout: 20_000,
    });
  };

  it('a read-only folder: names the target and "permission denied", never the temporary name', async () => {
    chmodSync(dir.path, 0o755);
    const ro = join(dir.path, 'ro');
    mkdirSync(ro, { mode: 0o555 });
    chmodSync(ro, 0o555);
    const target = join(ro, 'x.csv');
    const r = await asUser(['referrals', 'export', '-o', target]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      `error: cannot write ${target}: permission denied (this user cannot create files in ${ro})`,
    );
    expect(r.stderr).not.toMatch(/partial|EACCES/);
    expect(readdirSync(ro)).toEqual([]);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('an existing file the user may not write is refused before any request, not after the export', async () => {
    chmodSync(dir.path, 0o755); // not a shared folder: there another user's file is refused as not theirs
    const target = join(dir.path, 'root.csv');
    writeFileSync(target, 'keep\n', { mode: 0o644 });
    chmodSync(target, 0o444);
    const r = await asUser(['referrals', 'export', '-o', target]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `error: cannot write ${target}: permission denied (the file is read-only for this user)`,
    );
    expect(readFileSync(target, 'utf8')).toBe('keep\n');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it.skipIf(!existsSync('/proc/self'))(
    '-o /proc/x.csv gives the real reason, not "no such folder"',
    async () => {
      chmodSync(dir.path, 0o755);
      const r = await asUser(['referrals', 'export', '-o', '/proc/x.csv']);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toBe(
        'error: cannot write /proc/x.csv: files cannot be created in /proc (a proc file system, which holds no user files)',
      );
    },
  );
});
