// npm run demo: the quick start. Starts the emulator on a free port and runs the tool's main jobs
// against it, with no token and no network. Each command is shown as you would type it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'imaging.js');
const configDir = mkdtempSync(join(tmpdir(), 'imaging-demo-'));
const mock = spawn(process.execPath, [bin, 'mock', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  mock.stdout.once('data', (d) => resolve(String(d).trim()));
  mock.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
});
const env = { ...process.env, IMAGING_ENV: 'local', IMAGING_BASE_URL: url, IMAGING_CONFIG_DIR: configDir };

let failed = 0;
const steps = [
  ['modalities'],
  ['cpt', '73721'],
  ['icd10', 'meniscus', '--per-page', '5'],
  ['law-firms', 'search', 'partners', '--json'],
  ['sso'],
];
for (const args of steps) {
  process.stdout.write(`\n$ imaging ${args.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ')}\n`);
  const r = spawnSync(process.execPath, [bin, ...args], { env, stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
mock.kill('SIGTERM');
rmSync(configDir, { recursive: true, force: true });
process.stdout.write(
  `\nThat was the emulator (${url}), with no token. Run it yourself with: imaging mock\n` +
    'and point any command at it with --env local. For the real API: imaging auth login --base-url https://…\n',
);
process.exitCode = failed ? 1 : 0;
