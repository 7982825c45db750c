// npm run bench: start-up and lookup speed as ratios against bare `node -e 0`, medians of
// interleaved runs (so machine noise hits every command alike). Not a test: figures for the README.
//   BENCH_RUNS=40 npm run bench      more runs
//   npm run bench -- --only startup  one group (startup, export)
//   BENCH_EXPORT_REFERRALS=20000 BENCH_EXPORT_RUNS=3   the export figure's size and runs
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'imaging.cjs');
const runs = Number(process.env.BENCH_RUNS ?? 40);
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const configDir = mkdtempSync(join(tmpdir(), 'imaging-bench-'));
const env = { ...process.env, IMAGING_CONFIG_DIR: configDir, NO_COLOR: '1' };

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

function time(cmd) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd[0], cmd.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Runs every command once per round, in turn, for `n` rounds after a warm-up round. Returns each
 * command's median time and the median of its per-round ratio to the first command (the baseline
 * run in the same round), which cancels most of the machine's drift.
 */
function interleaved(cmds, n) {
  const times = cmds.map(() => []);
  for (const c of cmds) time(c.cmd);
  for (let i = 0; i < n; i++) {
    for (const [j, c] of cmds.entries()) times[j].push(time(c.cmd));
  }
  return times.map((t) => ({ median: median(t), ratio: median(t.map((x, i) => x / times[0][i])) }));
}

const rows = [];
if (!only || only === 'startup') {
  const { child, url } = await startMock();
  try {
    const node = [process.execPath, '-e', '0'];
    const cmds = [
      { name: 'node -e 0 (baseline)', cmd: node },
      { name: 'imaging --version', cmd: [process.execPath, bin, '--version'], target: 1.3 },
      {
        name: 'imaging cpt 73721 --json (emulator)',
        cmd: [process.execPath, bin, '--env', 'local', '--base-url', url, 'cpt', '73721', '--json'],
        target: 1.6,
      },
      {
        name: 'imaging icd10 knee (table, emulator)',
        cmd: [process.execPath, bin, '--env', 'local', '--base-url', url, 'icd10', 'knee'],
      },
    ];
    const results = interleaved(cmds, runs);
    cmds.forEach((c, i) => {
      const ratio = results[i].ratio;
      rows.push({
        what: c.name,
        median: `${results[i].median.toFixed(1)} ms`,
        ratio: `${ratio.toFixed(2)}x`,
        target: c.target ? `≤ ${c.target}x ${ratio <= c.target ? 'met' : 'MISSED'}` : '',
      });
    });
  } finally {
    child.kill('SIGTERM');
  }
}

if (!only || only === 'export') {
  // 20,000 referrals, 20 ms added to every answer: the default run against --concurrency 1.
  const count = Number(process.env.BENCH_EXPORT_REFERRALS ?? 20000);
  const exportRuns = Number(process.env.BENCH_EXPORT_RUNS ?? 3);
  const { child, url } = await startMock(['--referrals', String(count), '--latency', '20']);
  const rssFile = join(configDir, 'rss');
  const out = join(configDir, 'export.csv');
  const run = (extra) => {
    const cmd = [
      process.execPath,
      '--import',
      join(root, 'scripts', 'rss-probe.mjs'),
      bin,
      '--env',
      'local',
      '--base-url',
      url,
      'referrals',
      'export',
      '-o',
      out,
      ...extra,
    ];
    const t = process.hrtime.bigint();
    const r = spawnSync(cmd[0], cmd.slice(1), {
      env: { ...env, IMAGING_RSS_FILE: rssFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.status !== 0) throw new Error(`export exited ${r.status}: ${r.stderr}`);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    return { ms, rss: Number(readFileSync(rssFile, 'utf8')) };
  };
  try {
    run([]); // warm-up: the emulator serialises each referral once, then serves it from memory
    const def = [];
    const one = [];
    for (let i = 0; i < exportRuns; i++) {
      def.push(run([]));
      one.push(run(['--concurrency', '1']));
    }
    const dm = median(def.map((x) => x.ms));
    const om = median(one.map((x) => x.ms));
    const peak = Math.max(...def.map((x) => x.rss), ...one.map((x) => x.rss)) / (1024 * 1024);
    const ratio = dm / om;
    rows.push({
      what: `export ${count} referrals, --concurrency 1`,
      median: `${(om / 1000).toFixed(2)} s`,
      ratio: '1.00x',
      target: '',
    });
    rows.push({
      what: `export ${count} referrals, default (4)`,
      median: `${(dm / 1000).toFixed(2)} s`,
      ratio: `${ratio.toFixed(2)}x`,
      target: `≤ 0.35x ${ratio <= 0.35 ? 'met' : 'MISSED'}`,
    });
    rows.push({
      what: 'export peak RSS (any run)',
      median: `${peak.toFixed(0)} MiB`,
      ratio: '',
      target: `< 150 MiB ${peak < 150 ? 'met' : 'MISSED'}`,
    });
  } finally {
    child.kill('SIGTERM');
  }
}

const pad = (s, n) => String(s).padEnd(n);
console.log(
  `\nimaging bench: ${runs} interleaved rounds; median time, and the median of each round's ratio to node -e 0; Node ${process.version}, ${process.platform}/${process.arch}\n`,
);
console.log(`| ${pad('command', 40)} | ${pad('median', 10)} | ${pad('vs node', 8)} | target |`);
console.log(`|${'-'.repeat(42)}|${'-'.repeat(12)}|${'-'.repeat(10)}|--------|`);
for (const r of rows)
  console.log(`| ${pad(r.what, 40)} | ${pad(r.median, 10)} | ${pad(r.ratio, 8)} | ${r.target} |`);
rmSync(configDir, { recursive: true, force: true });
