// The single executable's start-up against the npm-installed tool on the same Node 24: `--version`
// and a lookup, in interleaved rounds (each round runs every command once, in turn, so machine
// noise hits both alike), after a warm-up round that fills the npm tool's compile cache. Each
// figure is the median of the rounds' ratios. Budget: ≤ 1.05x. Not a test: docs/speed.md's figures.
//   npm run package -- --target linux-x64 && node scripts/bench-standalone.mjs
//   BENCH_RUNS=60 BENCH_BINARY=dist/bin/imaging-linux-x64 node scripts/bench-standalone.mjs
// The npm tool is `npm pack` installed with `npm install -g` into a scratch prefix.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBin, PINNED } from './nodes.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 40);
const binary = process.env.BENCH_BINARY ?? join(root, 'dist', 'bin', 'imaging-linux-x64');
const node24 = join(nodeBin(PINNED.find((v) => v.startsWith('24.'))), 'node');
const scratch = mkdtempSync(join(tmpdir(), 'imaging-bench-sea-'));
const env = {
  ...process.env,
  IMAGING_CONFIG_DIR: join(scratch, 'config'),
  IMAGING_CACHE_DIR: join(scratch, 'cache'),
  NO_COLOR: '1',
};

function installNpmTool() {
  const quiet = { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] };
  // --ignore-scripts: prepack's build would empty dist/, the binary's folder with it.
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', scratch], quiet);
  const tgz = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
  const prefix = join(scratch, 'prefix');
  execFileSync('npm', ['install', '-g', '--no-audit', '--no-fund', join(scratch, tgz)], {
    ...quiet,
    env: { ...process.env, npm_config_prefix: prefix },
  });
  return join(prefix, 'lib', 'node_modules', 'partner-imaging-cli', 'bin', 'imaging.cjs');
}

function startMock() {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['mock', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('error', reject);
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

const npmBin = installNpmTool();
const { child, url } = await startMock();
try {
  const api = ['--env', 'local', '--base-url', url, '--no-cache'];
  const pairs = [
    { name: '`imaging --version`', args: ['--version'] },
    { name: '`imaging cpt 73721 --json --no-cache`', args: [...api, 'cpt', '73721', '--json'] },
    { name: '`imaging icd10 knee --no-cache` (a table)', args: [...api, 'icd10', 'knee'] },
  ];
  const ms = pairs.map(() => ({ sea: [], npm: [], ratio: [] }));
  for (let round = -1; round < runs; round++) {
    pairs.forEach((p, i) => {
      const npm = time([node24, npmBin, ...p.args]);
      const sea = time([binary, ...p.args]);
      if (round < 0) return; // the warm-up: the compile cache is filled
      ms[i].sea.push(sea);
      ms[i].npm.push(npm);
      ms[i].ratio.push(sea / npm);
    });
  }
  console.log(
    `${runs} interleaved rounds, Node ${execFileSync(node24, ['--version'], { encoding: 'utf8' }).trim()}, load average ${loadavg()[0].toFixed(1)}`,
  );
  console.log('| command | standalone | npm package | ratio (budget ≤ 1.05x) |');
  console.log('|---|---|---|---|');
  pairs.forEach((p, i) => {
    const r = median(ms[i].ratio);
    console.log(
      `| ${p.name} | ${median(ms[i].sea).toFixed(1)} ms | ${median(ms[i].npm).toFixed(1)} ms | ${r.toFixed(2)}x ${r <= 1.05 ? 'met' : 'MISSED'} |`,
    );
  });
} finally {
  child.kill();
  rmSync(scratch, { recursive: true, force: true });
}
