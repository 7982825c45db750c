import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emulator/faults.js';
import { COMMANDS } from '../../src/registry.js';
import { json, mockFixture, run, tempDir, testServer } from '../helpers.js';
import { CLI, openPane, type Pane } from '../terminal.js';

/**
 * Small defects reviewers found (issues 9 and 11), each recreated for real: a tmux pane of 80
 * columns where it is about a terminal, the real binary against the emulator otherwise.
 */

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let panes: Pane[] = [];
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  fx.reset();
  fx.mock.faults.clear();
  dir = tempDir();
});
afterEach(async () => {
  await Promise.all(panes.map((p) => p.close()));
  panes = [];
  dir.cleanup();
});

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
async function inPane(args: string[], env: NodeJS.ProcessEnv, cols = 80): Promise<Pane> {
  const pane = await openPane({
    cols,
    command: `cd ${quote(dir.path)} && ${CLI} ${args.map(quote).join(' ')}`,
    env,
  });
  panes.push(pane);
  return pane;
}
/** The words a shell reads from `text`, `imaging` standing for a function that prints its arguments. */
function shellRead(text: string): string[] {
  execFileSync('sh', ['-n', '-c', text]); // parses
  return execFileSync('bash', ['-c', `imaging() { printf '%s\\n' imaging "$@" END; }\n${text}`], {
    encoding: 'utf8',
  })
    .trimEnd()
    .split('\n');
}

describe('a command to copy, at an 80-column terminal (item 1)', () => {
  it('"To continue: imaging …" is continued with ` \\`: the pane\'s lines paste as ONE command, same words', async () => {
    fx.mock.faults.add(parseFault('500:*@2', '/api/v2/referrals')); // pages 1-2 answered, page 3 fails
    const args = [
      '--base-url',
      fx.mock.url,
      'referrals',
      'export',
      '--rows',
      'visit',
      '-o',
      'big2.csv',
      '--resumable',
      '--per-page',
      '10',
      '--concurrency',
      '1',
    ];
    const pane = await inPane(
      args,
      fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-polish', IMAGING_BASE_URL: undefined }),
    );
    expect(await pane.exited()).toBe(1);
    const lines = await pane.screen();
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    const start = lines.findIndex((l) => l.startsWith('To continue: '));
    expect(start).toBeGreaterThanOrEqual(0);
    const end = lines.findIndex((l, i) => i >= start && !l.endsWith(' \\'));
    expect(end).toBeGreaterThan(start); // it did not fit one line: broken, with continuations
    const pasted = lines
      .slice(start, end + 1)
      .join('\n')
      .slice('To continue: '.length);
    expect(shellRead(pasted)).toEqual(['imaging', ...args, '--resume', 'END']);
  });
});

describe("imaging api's production question at an 80-column terminal (item 2)", () => {
  it('is wrapped to the width, words whole: the URL on one line, answered on the last', async () => {
    const baseUrl = fx.mock.url.replace('127.0.0.1', 'localhost');
    const env = fx.env({ IMAGING_ENV: 'production', IMAGING_BASE_URL: baseUrl, IMAGING_TOKEN: 'mock-prod' });
    const path = '/referrals/3212c76a-c27e-4ca2-9e90-bb9c865c1630';
    const pane = await inPane(['api', 'PATCH', path, '-f', 'note=hello'], env);
    const lines = await pane.waitForScreen((l) => l.some((x) => x.includes('[y/N]')));
    const asked = lines.slice(lines.findIndex((l) => l.startsWith('Send PATCH')));
    expect(asked.length).toBeGreaterThan(1); // too long for one line
    for (const l of asked) expect(l.length).toBeLessThanOrEqual(80);
    expect(asked.join(' ')).toBe(`Send PATCH ${path} to PRODUCTION (${baseUrl})? [y/N]`);
    expect(asked.some((l) => l.includes(`(${baseUrl})?`))).toBe(true);
    await pane.keys('n', 'Enter');
    expect(await pane.exited()).toBe(1);
    expect((await pane.screen()).join('\n')).toContain('Nothing was sent.');
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('a verb without its group (item 4)', () => {
  const verbs = [...new Set(COMMANDS.filter((c) => c.path.length === 2).map((c) => c.path[1]!))].filter(
    (v) => !COMMANDS.some((c) => c.path[0] === v),
  );
  it.for(verbs)('imaging %s: exit 2, naming every command it is the verb of', async (verb) => {
    const r = await run(['--env', 'local', verb, 'x'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`unknown command '${verb}'`);
    for (const c of COMMANDS.filter((c) => c.path[1] === verb))
      expect(r.stderr).toContain(`imaging ${c.path.join(' ')}`);
    expect(fx.apiRequests()).toHaveLength(0);
  });
  it("imaging notifications suggests imaging referrals notifications; a typo of a group still gets commander's", async () => {
    const r = await run(['notifications'], { env: fx.env() });
    expect(r.stderr).toContain('Did you mean imaging referrals notifications?');
    const typo = await run(['referals'], { env: fx.env() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean referrals?');
  });
});

describe('counts in messages have thousands separators (item 5)', () => {
  const big = mockFixture({ referrals: 1500 });
  beforeAll(() => big.start());
  afterAll(() => big.stop());
  const env = () => big.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-polish-counts' });

  it('the summary: "Exported 1,500 referral rows … from 1,500 referrals" and the visit rows too', async () => {
    big.mock.faults.clear();
    const target = `${dir.path}/all.csv`;
    const r = await run(['referrals', 'export', '-o', target, '--concurrency', '2'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /Exported 1,500 referral rows \(csv\) from 1,500 referrals read in 15 pages, \d+ requests/,
    );
    const json = await run(['referrals', 'export', '--format', 'ndjson', '--rows', 'visit'], { env: env() });
    const rows = json.stdout.trimEnd().split('\n').length;
    expect(rows).toBeGreaterThan(1000);
    expect(json.stderr).toContain(`Exported ${rows.toLocaleString('en-US')} visit rows (ndjson)`);
  });

  it('the stop: "11 complete pages (1,100 referrals) are kept"', async () => {
    big.mock.faults.add(parseFault('500:*@11', '/api/v2/referrals'));
    try {
      const r = await run(
        ['referrals', 'export', '-o', `${dir.path}/x.csv`, '--concurrency', '1', '--resumable'],
        {
          env: env(),
        },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'Export stopped: 11 complete pages (1,100 referrals) are kept in a checkpoint',
      );
    } finally {
      big.mock.faults.clear();
    }
  });
});

describe('a target that cannot be written says why (item 6)', () => {
  const exportTo = (target: string) => run(['referrals', 'export', '-o', target], { env: fx.env() });
  it('a FILE where a folder of the path should be: "<it> is not a folder", not "no such folder"', async () => {
    writeFileSync(join(dir.path, 'ro2'), 'a file\n');
    const r = await exportTo(join(dir.path, 'ro2', 'x.csv'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `cannot write ${join(dir.path, 'ro2', 'x.csv')}: ${join(dir.path, 'ro2')} is not a folder`,
    );
    expect(r.stderr).not.toContain('no such folder');
    const dev = await exportTo('/dev/null/x.csv');
    expect(dev.code).toBe(2);
    expect(dev.stderr).toContain('cannot write /dev/null/x.csv: /dev/null is not a folder');
    expect(readFileSync(join(dir.path, 'ro2'), 'utf8')).toBe('a file\n');
    expect(fx.apiRequests()).toHaveLength(0);
  });
  it('-o /sys/x.csv names sysfs (even as root, where it is not a permission)', async () => {
    const r = await exportTo('/sys/x.csv');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'cannot write /sys/x.csv: files cannot be created in /sys (a sysfs file system',
    );
    expect(r.stderr).not.toContain('permission denied');
  });
  it('a trailing "/" after a FILE suggests no path inside it; after a folder, a name inside', async () => {
    writeFileSync(join(dir.path, 'ro2'), 'a file\n');
    const r = await exportTo(`${join(dir.path, 'ro2')}/`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`but ${join(dir.path, 'ro2')} is not a folder`);
    expect(r.stderr).toContain('e.g. -o referrals.csv');
    expect(r.stderr).not.toContain('ro2/referrals.csv');
    const folder = await exportTo(`${dir.path}/`);
    expect(folder.stderr).toContain(`e.g. -o ${dir.path}/referrals.csv`);
  });
});

describe('imaging api sends every UUID in lower case (item 7)', () => {
  const A = '3212C76A-C27E-4CA2-9E90-BB9C865C1630';
  const B = 'AB12C76A-C27E-4CA2-9E90-BB9C865C16FF';
  it('in -f/-F fields (body and query), lists of them, and the path with its query string', async () => {
    const server = await testServer((_req, res) => json(res, 200, { data: {} }));
    try {
      const env = {
        IMAGING_ENV: 'sandbox',
        IMAGING_BASE_URL: server.url,
        IMAGING_TOKEN: 'mock-uuids',
        IMAGING_CONFIG_DIR: dir.path,
      };
      const post = await run(
        [
          'api',
          'POST',
          `/referrals/${A}/notes?visit=${B}&ids=${A}%2C${B}&q=Hello`,
          '-f',
          `referral_id=${A}`,
          '-F',
          `ids=${A},${B}`,
          '-f',
          'note=KEEP Case',
        ],
        { env },
      );
      expect(post.code).toBe(0);
      const get = await run(
        ['api', 'GET', '/icd10', '-f', `ids[]=${B}`, '-F', `modality=${A}`, '-f', 'q=Knee'],
        { env },
      );
      expect(get.code).toBe(0);
      const [p, g] = server.seen;
      const a = A.toLowerCase();
      const b = B.toLowerCase();
      expect(p!.url).toBe(`/api/v2/referrals/${a}/notes?visit=${b}&ids=${a},${b}&q=Hello`);
      expect(JSON.parse(p!.body)).toEqual({ referral_id: a, ids: `${a},${b}`, note: 'KEEP Case' });
      const q = new URL(g!.url, 'http://x').searchParams;
      expect(q.getAll('ids[]')).toEqual([b]);
      expect(q.get('modality')).toBe(a);
      expect(q.get('q')).toBe('Knee'); // not a UUID: as given
    } finally {
      await server.close();
    }
  });
});

describe('the "Left out" note names as many columns as fit (item 8)', () => {
  it('referrals list at 64 columns: "Left out: Status, Line of business and 2 more", one line', async () => {
    const pane = await openPane({ cols: 64, command: `${CLI} referrals list`, env: fx.env() });
    panes.push(pane);
    expect(await pane.exited()).toBe(0);
    const notes = (await pane.screen()).filter((l) => l.startsWith('Left out'));
    expect(notes).toEqual(['Left out: Status, Line of business and 2 more (--wide shows all)']);
  });
});
