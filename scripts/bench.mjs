// npm run bench: start-up, export and list figures on every Node the project is tested on (the
// machine's, and the pinned 22, 24, 26 of scripts/nodes.mjs, installed into the cache if missing),
// side by side. Start-up is a ratio against that same Node's bare `node -e 0`, or for a lookup
// against scripts/plain-http.cjs making the same request, median of interleaved rounds (each round runs every command on every Node once, in turn, so machine noise
// hits all alike). Budgets are checked on Node 24. Not a test: the figures of docs/speed.md.
//   BENCH_RUNS=60 npm run bench                 more rounds (default 40)
//   npm run bench -- --only startup             one group: startup, export, list
//   BENCH_NODES=20,24 npm run bench             some of the Nodes (major versions)
//   BENCH_EXPORT_REFERRALS=20000 BENCH_EXPORT_RUNS=5 BENCH_LIST_REFERRALS=100000 (the defaults)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBin, PINNED } from './nodes.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'imaging.cjs');
const probe = join(root, 'scripts', 'rss-probe.mjs');
const runs = Number(process.env.BENCH_RUNS ?? 40);
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const configDir = mkdtempSync(join(tmpdir(), 'imaging-bench-'));
// Its own config and cache folders (the compile cache and the reference cache start empty and are
// filled by the warm-up round), never the user's.
const env = {
  ...process.env,
  IMAGING_CONFIG_DIR: configDir,
  IMAGING_CACHE_DIR: join(configDir, 'cache'),
  NO_COLOR: '1',
};
const BUDGET_NODE = 24;

const major = (v) => Number(v.replace(/^v/, '').split('.')[0]);
const wanted = process.env.BENCH_NODES?.split(',').map(Number);
const nodes = [{ version: process.version, exe: process.execPath }];
for (const v of PINNED) {
  if (major(v) === major(process.version)) continue;
  nodes.push({ version: `v${v}`, exe: join(nodeBin(v), 'node') });
}
const chosen = nodes.filter((n) => !wanted || wanted.includes(major(n.version)));

function startMock(args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'mock', '--port', '0', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
  });
}

const rssFile = join(configDir, 'rss');
const withProbe = (cmd) => [cmd[0], '--import', probe, ...cmd.slice(1)];

/** Runs a command to completion; its wall time (ms) and, with `rss`, its peak RSS (bytes). */
function time(cmd, { rss = false, env: own = {} } = {}) {
  const c = rss ? withProbe(cmd) : cmd;
  const t = process.hrtime.bigint();
  const r = spawnSync(c[0], c.slice(1), {
    env: { ...env, ...own, ...(rss ? { IMAGING_RSS_FILE: rssFile } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, rss: rss ? Number(readFileSync(rssFile, 'utf8')) : undefined };
}

/** The same with stdout a pipe that this script reads and drops (as `| wc -c` would). */
function timePiped(cmd) {
  const c = withProbe(cmd);
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(c[0], c.slice(1), {
      env: { ...env, IMAGING_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.resume();
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`${cmd.join(' ')} exited ${code}`));
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      resolve({ ms, rss: Number(readFileSync(rssFile, 'utf8')) });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const mib = (b) => `${(b / (1024 * 1024)).toFixed(0)} MiB`;
const out = [];
const say = (line = '') => {
  out.push(line);
  console.log(line);
};
const table = (head, rows) => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  say(line(head));
  say(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) say(line(r));
  say();
};
const verdict = (value, budget) => `≤ ${budget.toFixed(1)}x ${value <= budget ? 'met' : 'MISSED'}`;
const load = () => `load average ${loadavg()[0].toFixed(1)}`;
const num = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

say(
  `imaging bench, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${process.platform} ${process.arch}; Nodes ${chosen.map((n) => n.version).join(', ')}; ${load()} at the start${process.env.NODE_EXTRA_CA_CERTS ? '; NODE_EXTRA_CA_CERTS is set (Node 20 reads that file at every start, its bare `node -e 0` too; Node 22+ only when TLS is first used)' : ''}`,
);
say();

if (!only || only === 'startup') {
  const { child, url } = await startMock();
  try {
    const api = ['--env', 'local', '--base-url', url];
    // `of`: the yardstick of the ratio (the first two commands). `env`: this command's own.
    const cmds = [
      { name: '`node -e 0`', args: ['-e', '0'] },
      {
        name: '`node scripts/plain-http.cjs` (the same request as `cpt`)',
        args: [join(root, 'scripts', 'plain-http.cjs'), url],
        of: 0,
      },
      { name: '`imaging --version`', args: [bin, '--version'], of: 0, budget: 1.2 },
      // --no-cache: a lookup that asks the emulator (the reference cache would answer from round 2).
      {
        name: '`imaging cpt 73721 --json --no-cache`',
        args: [bin, ...api, '--no-cache', 'cpt', '73721', '--json'],
        of: 1,
        budget: 1.3,
      },
      {
        name: '`imaging icd10 knee --no-cache` (a table)',
        args: [bin, ...api, '--no-cache', 'icd10', 'knee'],
        of: 1,
        budget: 1.4,
      },
      {
        name: '`imaging cpt 73721 --json` (reference cache hit)',
        args: [bin, ...api, 'cpt', '73721', '--json'],
        of: 1,
      },
      // The tricks, without: each against its row above (docs/speed.md).
      {
        name: 'the same `cpt`, without the compile cache (no cache folder)',
        args: [bin, ...api, '--no-cache', 'cpt', '73721', '--json'],
        env: { IMAGING_CACHE_DIR: 'relative-so-unused' },
        of: 1,
      },
      {
        name: '`imaging --no-cache --version` (through the bundle)',
        args: [bin, '--no-cache', '--version'],
        of: 0,
      },
      {
        name: '`imaging __complete referrals export --rows =v` (a TAB press)',
        args: [bin, '__complete', 'referrals', 'export', '--rows', '=v'],
        of: 0,
      },
    ];
    // times[node][cmd] = one time per round
    const times = chosen.map(() => cmds.map(() => []));
    const round = (keep) => {
      for (const [i, n] of chosen.entries())
        for (const [j, c] of cmds.entries()) {
          const { ms } = time([n.exe, ...c.args], { env: c.env });
          if (keep) times[i][j].push(ms);
        }
    };
    round(false); // warm-up (fills each Node's compile cache)
    for (let r = 0; r < runs; r++) round(true);
    const at = chosen.findIndex((n) => major(n.version) === BUDGET_NODE);
    const rows = cmds.map((c, j) => {
      const cells = chosen.map((_, i) => {
        const t = times[i][j];
        if (c.of === undefined) return { text: `${median(t).toFixed(1)} ms` };
        const ratio = median(t.map((x, k) => x / times[i][c.of][k]));
        return { text: `${median(t).toFixed(1)} ms, ${ratio.toFixed(2)}x`, ratio };
      });
      const budget = !c.budget
        ? ''
        : at >= 0
          ? verdict(cells[at].ratio, c.budget)
          : `≤ ${c.budget.toFixed(1)}x`;
      return [
        c.name,
        c.of === undefined ? '' : c.of === 0 ? '`node -e 0`' : 'plain-http',
        ...cells.map((x) => x.text),
        budget,
      ];
    });
    say(
      `Start-up: median of ${plural(runs, 'interleaved round')}; the ratio is the median of each round's time over that of its yardstick, on the same Node in the same round (${load()} at the end).`,
    );
    say();
    table(
      ['command', 'ratio to', ...chosen.map((n) => `Node ${n.version}`), `budget (Node ${BUDGET_NODE})`],
      rows,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

if (!only || only === 'export') {
  // N referrals, 20 ms added to every answer, `-o` a file: the default (--concurrency 4) against
  // --concurrency 1, interleaved, and the peak RSS of every run.
  const count = Number(process.env.BENCH_EXPORT_REFERRALS ?? 20000);
  const exportRuns = Number(process.env.BENCH_EXPORT_RUNS ?? 5);
  const { child, url } = await startMock(['--referrals', String(count), '--latency', '20']);
  const target = join(configDir, 'export.csv');
  const cmd = (n, extra) => [
    n.exe,
    bin,
    '--env',
    'local',
    '--base-url',
    url,
    'referrals',
    'export',
    '-o',
    target,
    ...extra,
  ];
  try {
    time(cmd(chosen[0], []), { rss: true }); // warm-up: the emulator serialises each referral once
    const res = chosen.map(() => ({ def: [], one: [] }));
    for (let r = 0; r < exportRuns; r++)
      for (const [i, n] of chosen.entries()) {
        res[i].def.push(time(cmd(n, []), { rss: true }));
        res[i].one.push(time(cmd(n, ['--concurrency', '1']), { rss: true }));
      }
    const rows = [
      ['`--concurrency 1`', ...res.map((x) => `${(median(x.one.map((y) => y.ms)) / 1000).toFixed(2)} s`), ''],
      [
        'default (`--concurrency 4`)',
        // The budget: at most 0.35x of --concurrency 1 (about 0.30x when quiet, room for the noise of a
        // shared machine). Judged on every Node, as the memory budgets are.
        ...res.map((x) => {
          const ratio = median(x.def.map((y) => y.ms)) / median(x.one.map((y) => y.ms));
          return `${(median(x.def.map((y) => y.ms)) / 1000).toFixed(2)} s, ${ratio.toFixed(2)}x ${ratio <= 0.35 ? 'met' : 'MISSED'}`;
        }),
        '≤ 0.35x of `--concurrency 1`',
      ],
      [
        'peak RSS, any run',
        ...res.map((x) => {
          const peak = Math.max(...x.def.map((y) => y.rss), ...x.one.map((y) => y.rss));
          return `${mib(peak)} ${peak <= 100 * 1024 * 1024 ? 'met' : 'MISSED'}`;
        }),
        '≤ 100 MiB',
      ],
    ];
    say(
      `Export of ${num(count)} referrals (20 ms latency, \`-o\` a file): median of ${plural(exportRuns, 'run')} each way, in turn, after a warm-up run (${load()} at the end).`,
    );
    say();
    table([`export`, ...chosen.map((n) => `Node ${n.version}`), 'budget'], rows);
  } finally {
    child.kill('SIGTERM');
  }
}

if (!only || only === 'list') {
  // Every referral as NDJSON and as JSON into a pipe (read and dropped by this script), one run each.
  const count = Number(process.env.BENCH_LIST_REFERRALS ?? 100000);
  const { child, url } = await startMock(['--referrals', String(count)]);
  const cmd = (n, format) => [
    n.exe,
    bin,
    '--env',
    'local',
    '--base-url',
    url,
    'referrals',
    'list',
    '--all',
    '--format',
    format,
  ];
  try {
    await timePiped(cmd(chosen[0], 'ndjson')); // warm-up
    const rows = [];
    for (const format of ['ndjson', 'json']) {
      const cells = [];
      for (const n of chosen) {
        const r = await timePiped(cmd(n, format));
        cells.push(
          `${(r.ms / 1000).toFixed(1)} s, ${mib(r.rss)} ${r.rss <= 150 * 1024 * 1024 ? 'met' : 'MISSED'}`,
        );
      }
      rows.push([`\`referrals list --all --format ${format}\``, ...cells, '≤ 150 MiB']);
    }
    say(
      `\`referrals list --all\` of ${num(count)} referrals into a pipe: time and peak RSS, one run each (${load()} at the end).`,
    );
    say();
    table(['list', ...chosen.map((n) => `Node ${n.version}`), 'budget'], rows);
  } finally {
    child.kill('SIGTERM');
  }
}

rmSync(configDir, { recursive: true, force: true });
