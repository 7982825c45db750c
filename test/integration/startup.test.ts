import { writeFileSync } from 'node:fs';
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
  const { readFileSync } = await import('node:fs');
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
    expect(files.some((f) => f.endsWith('cli.cjs'))).toBe(false);
    expect(builtins).not.toContain('http');
  });
});
