// npm run demo: the quick start. Starts the emulator on a free port and runs the tool's main jobs
// against it, with no token and no network. Each command is shown as you would type it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'imaging.cjs');
const configDir = mkdtempSync(join(tmpdir(), 'imaging-demo-'));
const mock = spawn(process.execPath, [bin, 'mock', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  mock.stdout.once('data', (d) => resolve(String(d).trim()));
  mock.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
});
// Its own config and cache folders: the demo leaves nothing in yours (the reference cache would
// keep answers of an emulator on a random port).
const env = {
  ...process.env,
  IMAGING_ENV: 'local',
  IMAGING_BASE_URL: url,
  IMAGING_CONFIG_DIR: configDir,
  IMAGING_CACHE_DIR: join(configDir, 'cache'),
};

let failed = 0;
const show = (args) => {
  process.stdout.write(`\n$ imaging ${args.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ')}\n`);
  const r = spawnSync(process.execPath, [bin, ...args], { env, stdio: 'inherit' });
  if (r.status !== 0) failed++;
};
const quiet = (args) => spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' }).stdout;

show(['cpt', '73721']);
show(['icd10', 'meniscus', '--per-page', '5']);
show(['law-firms', 'search', 'partners']);
show(['referrals', 'list', '--per-page', '5']);
const [first] = JSON.parse(quiet(['referrals', 'list', '--per-page', '20', '--json']) || '[]').filter((r) =>
  r.visits.some((v) => v.start_time),
);
if (first) show(['referrals', 'get', first.reference]);
// From referral to report: find a case by the patient's name, then save its report PDFs.
show(['referrals', 'find', 'garcia, mary']);
show(['referrals', 'download', 'R-240004', '-D', join(configDir, 'case-R-240004')]);
const csv = join(configDir, 'referrals.csv');
show(['referrals', 'export', '--rows', 'visit', '-o', csv]);
process.stdout.write(`$ head -3 ${csv}\n${readFileSync(csv, 'utf8').split('\r\n').slice(0, 3).join('\n')}\n`);
show(['sso']);
mock.kill('SIGTERM');
rmSync(configDir, { recursive: true, force: true });
process.stdout.write(
  `\nThat was the emulator (${url}), with no token.\n` +
    'To try it yourself: npm link (or use node bin/imaging.cjs), then imaging mock,\n' +
    'and point any command at it with --env local.\n' +
    'For the real API: imaging auth login --base-url https://…\n',
);
process.exitCode = failed ? 1 : 0;
