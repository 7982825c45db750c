import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, mockFixture, tempDir } from '../helpers.js';

// What start-up loads, seen from inside the real binary: a preloaded probe lists, at exit, the
// built-in modules Node loaded and the files required. Each module named here cost milliseconds of
// every lookup when it crept in (README "Speed"); `npm run bench` gives the timings.
const fx = mockFixture();
const dir = tempDir('imaging-startup-');
const probe = join(dir.path, 'probe.cjs');
const report = join(dir.path, 'loaded.json');
writeFileSync(
  probe,
  `const fs = require('node:fs');
process.on('exit', () => fs.writeFileSync(process.env.PROBE_OUT, JSON.stringify({
  builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)),
  files: Object.keys(require.cache),
})));
`,
);
beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

async function loaded(args: string[]) {
  const r = await execa(process.execPath, ['--require', probe, BIN, ...args], {
    reject: false,
    env: { ...fx.env(), NO_COLOR: '1', PROBE_OUT: report },
    extendEnv: false,
    timeout: 20_000,
  });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return JSON.parse(readFileSync(report, 'utf8')) as { builtins: string[]; files: string[] };
}

describe('start-up loads only what the command needs', () => {
  it('a lookup loads node:http, but not undici, child_process, crypto or tls', async () => {
    const { builtins } = await loaded(['cpt', '73721', '--json']);
    expect(builtins).toContain('http');
    // import('node:http') would build an ES module facade whose getters load Node's undici.
    expect(builtins.filter((m) => m.includes('undici'))).toEqual([]);
    // commander requires child_process at load; the bundle gives it a lazy stand-in.
    expect(builtins).not.toContain('child_process');
    expect(builtins).not.toContain('crypto');
    expect(builtins).not.toContain('tls');
  });

  it('--version reads the version file and not the CLI bundle', async () => {
    const { files, builtins } = await loaded(['--version']);
    expect(files.some((f) => f.endsWith('version.cjs'))).toBe(true);
    expect(files.some((f) => f.endsWith('load-cli.cjs') || f.endsWith('cli.cjs'))).toBe(false);
    expect(builtins).not.toContain('http');
    expect(builtins).not.toContain('vm');
  });
});

describe('the code cache of a whole run (bin/load-cli.cjs)', () => {
  const cacheDir = join(dir.path, 'cache');
  const lookup = async (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    execa(process.execPath, [BIN, ...args], {
      reject: false,
      env: { ...fx.env(), NO_COLOR: '1', IMAGING_CACHE_DIR: cacheDir, ...extra },
      extendEnv: false,
      timeout: 20_000,
    });
  const cacheFiles = () => readdirSync(cacheDir).filter((f) => f.endsWith('.v8cache'));

  it('is written after the first run, owner-only, and used as is by the next', async () => {
    const first = await lookup(['cpt', '73721', '--json']);
    expect(first.exitCode).toBe(0);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    const [file] = cacheFiles();
    expect(file).toMatch(/_cpt\.v8cache$/);
    const path = join(cacheDir, file!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const written = statSync(path);
    const second = await lookup(['cpt', '73721', '--json']);
    expect(second.stdout).toBe(first.stdout);
    expect(statSync(path).mtimeMs).toBe(written.mtimeMs); // accepted, so not written again
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a damaged cache is refused by V8, the command still answers, and the cache is made again', async () => {
    await lookup(['modalities', '--json']);
    const file = cacheFiles().find((f) => f.endsWith('_modalities.v8cache'))!;
    const path = join(cacheDir, file);
    const good = readFileSync(path);
    const damaged = Buffer.from(good);
    for (let i = 0; i < damaged.length; i += 7) damaged[i] = (damaged[i]! + 1) & 0xff;
    writeFileSync(path, damaged);
    const r = await lookup(['modalities', '--json']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).length).toBeGreaterThan(0);
    expect(readFileSync(path).equals(damaged)).toBe(false);
  });

  it('a cache folder others can write to is neither read nor written', async () => {
    const shared = join(dir.path, 'shared-cache');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const r = await lookup(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: shared });
    expect(r.exitCode).toBe(0);
    expect(readdirSync(shared)).toEqual([]);
  });

  it('holds compiled code only: no token, no patient data, no record the command printed', async () => {
    const token = 'mock-cache-scan-5e1f0c';
    const referral = fx.mock.referrals.at(0);
    const r = await lookup(['referrals', 'get', referral.id, '--json'], { IMAGING_TOKEN: token });
    expect(r.exitCode).toBe(0);
    const patient = JSON.parse(r.stdout).patient as { identifier: { value: string }; date_of_birth: string };
    const file = cacheFiles().find((f) => f.endsWith('_referrals.v8cache'))!;
    const bytes = readFileSync(join(cacheDir, file));
    for (const secret of [token, referral.id, patient.identifier.value]) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
      expect(bytes.includes(Buffer.from(secret, 'utf16le'))).toBe(false);
    }
  });
});
