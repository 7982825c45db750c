import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockFixture, ROOT, spawnCli, tempDir } from '../helpers.js';
import { type SecretService, secretServiceMissing, startSecretService } from '../keychain-service.js';

// The three ways in (a clone, the npm package, the single executable): each says which it is in
// `--version`, and the single executable reads nothing beside itself.

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const line = (kind: string, node = process.version) =>
  `${pkg.version} (${kind}, Node ${node}, ${process.platform}-${process.arch})`;

describe('--version: one line, the version, the build and the Node inside', () => {
  it('from a clone: source, whether answered early or by the CLI bundle', async () => {
    for (const args of [['--version'], ['--no-cache', '--version'], ['cpt', '-V']]) {
      const r = await spawnCli(args);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(line('source'));
    }
  });

  it('from the npm layout (bin/ and dist/, no src/): npm', async () => {
    const dir = tempDir();
    try {
      cpSync(join(ROOT, 'bin'), join(dir.path, 'bin'), { recursive: true });
      cpSync(join(ROOT, 'dist'), join(dir.path, 'dist'), {
        recursive: true,
        filter: (f) => !f.endsWith('/bin'),
      });
      for (const args of [['--version'], ['--no-cache', '--version']]) {
        const r = await execa(process.execPath, [join(dir.path, 'bin', 'imaging.cjs'), ...args], {
          reject: false,
        });
        expect(r.stdout).toBe(line('npm'));
      }
    } finally {
      dir.cleanup();
    }
  });
});

describe('the npm package', () => {
  it('is never published by accident: npm publish stops unless IMAGING_PUBLISH=yes', async () => {
    const r = await execa('npm', ['publish', '--dry-run'], {
      cwd: ROOT,
      reject: false,
      env: { IMAGING_PUBLISH: '', npm_config_offline: 'true' },
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('npm publish is refused: the package name is not registered by us');
  });

  it('holds the bundles, the man page, the README and docs/, never dist/bin/, sources, tests or source maps', async () => {
    const dir = tempDir();
    try {
      // The project's layout with what must stay out beside what goes in.
      for (const f of ['package.json', 'README.md', 'bin', 'dist', 'man', 'docs'])
        cpSync(join(ROOT, f), join(dir.path, f), {
          recursive: true,
          filter: (p) => !p.endsWith('/dist/bin'),
        });
      for (const f of ['dist/bin/imaging-linux-x64', 'dist/cli.cjs.map', 'src/main.ts', 'test/a.test.ts']) {
        mkdirSync(join(dir.path, f, '..'), { recursive: true });
        writeFileSync(join(dir.path, f), 'x');
      }
      const r = await execa('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir.path });
      const [packed] = JSON.parse(r.stdout) as [{ files: { path: string }[] }];
      const files = packed.files.map((f) => f.path).sort();
      expect(files).toContain('bin/imaging.cjs');
      expect(files).toContain('dist/cli.cjs');
      expect(files).toContain('man/imaging.1');
      expect(files).toContain('README.md');
      // The README's and the man page's links: the command pages and recipes travel with it.
      expect(files).toContain('docs/commands/index.md');
      expect(files).toContain('docs/recipes.md');
      expect(files.filter((f) => /^(dist\/bin|src|test)\/|\.map$/.test(f))).toEqual([]);
      const pkgJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      expect(pkgJson.man).toEqual(['man/imaging.1']);
      expect(pkgJson.private).toBeUndefined();
    } finally {
      dir.cleanup();
    }
  });
});

// Built by `npm run package -- --target linux-x64`; .ci/run builds it and runs this file after.
const BINARY = join(ROOT, 'dist', 'bin', 'imaging-linux-x64');
const missing =
  process.platform !== 'linux' || process.arch !== 'x64'
    ? 'not a linux-x64 machine'
    : existsSync(BINARY)
      ? undefined
      : 'no dist/bin/imaging-linux-x64 (npm run package -- --target linux-x64)';
if (missing) console.log(`standalone: the single-executable tests are skipped: ${missing}`);
const keychainMissing = missing ? undefined : secretServiceMissing();
if (keychainMissing) console.log(`standalone: its keychain test is skipped: ${keychainMissing}`);

describe.skipIf(missing)('the single executable, on a PATH with no node', () => {
  const fx = mockFixture();
  const dir = tempDir();
  // A copy with the npm layout's files beside it and above it: none of them may be read.
  const exe = join(dir.path, 'pkg', 'bin', 'imaging');
  const env = () => ({
    PATH: join(dir.path, 'empty'),
    IMAGING_CONFIG_DIR: join(dir.path, 'config'),
    IMAGING_CACHE_DIR: join(dir.path, 'cache'),
    NO_COLOR: '1',
  });
  const run = (args: string[], input?: string) =>
    execa(exe, args, {
      reject: false,
      env: env(),
      extendEnv: false,
      timeout: 20_000,
      ...(input ? { input } : {}),
    });
  it('holds no path of the machine it was built on', () => {
    const bytes = readFileSync(BINARY);
    expect(bytes.includes(ROOT)).toBe(false);
    expect(bytes.includes('node_modules/.cache/imaging-node')).toBe(false);
  });
  beforeAll(async () => {
    await fx.start();
    mkdirSync(join(dir.path, 'pkg', 'bin'), { recursive: true });
    mkdirSync(join(dir.path, 'pkg', 'dist'));
    mkdirSync(join(dir.path, 'empty'));
    copyFileSync(BINARY, exe);
    for (const f of [join('pkg', 'README.md'), join('pkg', 'bin', 'README.md')])
      writeFileSync(join(dir.path, f), 'x');
    writeFileSync(join(dir.path, 'pkg', 'dist', 'completion.json'), '{"bogus": true}');
  });
  afterAll(async () => {
    await fx.stop();
    dir.cleanup();
  });

  it('says it is the standalone build, with its Node 24', async () => {
    const r = await run(['--version']);
    expect(r.stdout).toMatch(
      new RegExp(
        `^${pkg.version.replace(/\./g, '\\.')} \\(standalone, Node v24\\.\\d+\\.\\d+, linux-x64\\)$`,
      ),
    );
  });

  it('looks up against the emulator', async () => {
    const r = await run(['--env', 'local', '--base-url', fx.mock.url, 'cpt', '73721', '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)[0].code).toBe('73721');
  });

  it('runs the CLI from the code cache made at build time (V8 takes it)', async () => {
    const r = await execa(exe, ['--env', 'local', '--base-url', fx.mock.url, 'body-parts'], {
      reject: false,
      env: { ...env(), IMAGING_CODE_CACHE_REPORT: '1' },
      extendEnv: false,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe('code cache: used');
  });

  it("names no README beside it in help's Docs line, and completes from its own table", async () => {
    const help = await run(['--help']);
    expect(help.stdout).toContain('Docs: README.md, published with this binary and in the npm package');
    expect(help.stdout).not.toContain(dir.path);
    const tab = await run(['__complete', '=refe']);
    expect(tab.stdout).toMatch(/^referrals\t/);
  });

  it('with no keychain answering, keeps a token in the config file, saying so in one line', async () => {
    const r = await run(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], 'mock-token\n');
    expect(r.exitCode).toBe(0);
    const notes = r.stderr.split('\n').filter((l) => l.startsWith('Note:'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^Note: no OS keychain took the token \(.+\), so it is kept in .+, readable only by you\.$/,
    );
  });
});

describe.skipIf(missing || keychainMissing)(
  'the single executable with the OS keychain (a real Secret Service)',
  () => {
    let service: SecretService;
    const fx = mockFixture();
    const dir = tempDir();
    const TOKEN = 'mock-keychain-TOKEN-b1e9';
    beforeAll(async () => {
      service = await startSecretService();
      await fx.start();
    });
    afterAll(async () => {
      service?.stop();
      await fx.stop();
      dir.cleanup();
    });
    const run = (args: string[], input?: string) =>
      execa(BINARY, ['--env', 'local', ...args], {
        reject: false,
        env: {
          ...service.env,
          PATH: join(dir.path, 'empty'),
          IMAGING_CONFIG_DIR: join(dir.path, 'config'),
          IMAGING_CACHE_DIR: join(dir.path, 'cache'),
          NO_COLOR: '1',
        },
        extendEnv: false,
        timeout: 20_000,
        ...(input ? { input } : {}),
      });

    it('keeps the token in the keychain through the addon it carries, written to the private cache folder', async () => {
      const login = await run(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], TOKEN);
      expect(login.stderr).toContain('kept in the OS keychain');
      expect(login.exitCode).toBe(0);
      expect(readFileSync(join(dir.path, 'config', 'config.json'), 'utf8')).not.toContain(TOKEN);
      const native = join(dir.path, 'cache', 'native');
      expect(statSync(native).mode & 0o777).toBe(0o700);
      expect(readdirSync(native).filter((f) => f.endsWith('.node'))).toHaveLength(1);
      expect((await run(['modalities', '--json', '--no-cache'])).exitCode).toBe(0);
      // A changed addon file is written again from the binary before it is loaded.
      const addon = join(native, readdirSync(native).find((f) => f.endsWith('.node'))!);
      writeFileSync(addon, 'not an addon');
      expect((await run(['modalities', '--json', '--no-cache'])).exitCode).toBe(0);
      // Its keychain helper reads the stored token only into a pipe, never onto a terminal.
      const { token_origin: origin } = JSON.parse(
        readFileSync(join(dir.path, 'config', 'config.json'), 'utf8'),
      ).environments.local;
      const account = origin ? `local ${origin}` : 'local';
      const helper = `${BINARY} __keychain get imaging '${account}' </dev/null`;
      const atTerminal = await execa('script', ['-qec', helper, '/dev/null'], {
        reject: false,
        env: { ...service.env, IMAGING_CACHE_DIR: join(dir.path, 'cache') },
        extendEnv: false,
        timeout: 20_000,
      });
      expect(atTerminal.stdout).not.toContain(TOKEN);
      expect(atTerminal.stdout).toContain('answers only to a pipe');
      expect(atTerminal.exitCode).toBe(2);
      const piped = await execa(BINARY, ['__keychain', 'get', 'imaging', account], {
        reject: false,
        env: { ...service.env, IMAGING_CACHE_DIR: join(dir.path, 'cache') },
        extendEnv: false,
        input: '',
      });
      expect(piped.stdout).toContain(TOKEN);
      const logout = await run(['auth', 'logout']);
      expect(logout.stderr).toContain('removed from the OS keychain');
    });
  },
);
