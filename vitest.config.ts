import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// This machine sets NODE_EXTRA_CA_CERTS (the system bundle) for every process. Node 20 reads and
// parses that file at every start (Node 22+ only when TLS is first used): a bare `node -e 0` took
// 70-90 ms with it against 30 ms without, and the suite starts ~280 Node processes (tmux panes,
// completion shells running `imaging __complete`, the examples' bash) that inherit it. No test
// needs it: tests talk only to servers they start on 127.0.0.1 over plain HTTP, and none verifies
// a certificate against the system's authorities. Unset here, while vitest loads its config: before
// its workers and the global set-up start, so every process they start inherits the environment
// without it.
delete process.env.NODE_EXTRA_CA_CERTS;

// The config and cache folders the tests' commands see: names inside a folder of this run's own,
// never made by the tool until a test writes (a fixed path such as /nonexistent is made by root and
// then kept one run's answers for the next). test/global-setup.ts removes it when the run ends.
const scratch = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'imaging-test-run-'));
process.env.IMAGING_TEST_SCRATCH = scratch;

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default defineConfig({
  define: { __IMAGING_VERSION__: JSON.stringify(pkg.version) },
  plugins: [
    {
      // The module cache (below) is keyed by each environment's resolve options, which list this Node's
      // own built-in modules: Node 24 lists node:sqlite and node:sea that 22 does not, 26 drops the
      // _stream_* aliases. So each Node version transformed every file again (a clean clone's CI runs
      // four). vitest never uses its SSR externals list (noExternal is true: it externalises modules
      // itself), and the sources import built-ins only as node:…, so both lists are made the same on
      // every version: one cache serves them all.
      name: 'imaging:one-module-cache-for-every-node',
      configResolved(config) {
        for (const env of Object.values(config.environments)) {
          const resolve = env.resolve as { external: unknown; noExternal: unknown; builtins: unknown[] };
          if (resolve.noExternal === true) resolve.external = [];
          resolve.builtins = resolve.builtins.filter((b) => !(typeof b === 'string' && b.startsWith('_')));
        }
      },
    },
  ],
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Transformed modules are kept on disk from run to run (keyed by each file's text, vitest's version
    // and this config's file): about 3 s of CPU a run. The version defined above is not in vitest's
    // key, so it names the folder: a new version is never served the old one's modules.
    experimental: {
      fsModuleCache: true,
      fsModuleCachePath: `node_modules/.experimental-vitest-cache/${pkg.version}`,
    },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // One process per worker, reused from file to file: a fresh process and module graph per file
    // cost ~4 s of a ~19 s run on 2 cores. Each file starts its own emulator and servers, and none
    // changes process-wide state it does not restore.
    isolate: false,
    // A larger young generation for the workers (V8's default semi-space is 16 MB): the tests that
    // build, parse and write lists of many records in-process collect less often and copy less.
    // The binaries the tests start are not given it: they run as a user runs them.
    execArgv: ['--max-semi-space-size=64'],
    // Three workers on two cores: a third keeps both busy while one waits on a real process (a
    // terminal, a keychain, a child run); on a quiet machine it finished sooner in both interleaved
    // pairs against two (docs/speed.md has the figures; under heavy load two did better).
    maxWorkers: 3,
    // Tests never read the developer's own config, token or caches (a test of the caches names its
    // own folder; the panes and shells the terminal tests start inherit this environment).
    env: {
      IMAGING_CACHE_DIR: join(scratch, 'cache'),
      // Scratch folders (os.tmpdir(): tempDir(), the panes' sockets) on a RAM file system where
      // there is one: this machine's /tmp is ext4 mounted with `discard`, where removing a folder
      // waited on the journal, 5 s of one worker's run under load. The binaries the tests start
      // get their own environment (TMPDIR unset: /tmp) unless a test passes one.
      ...(existsSync('/dev/shm') ? { TMPDIR: '/dev/shm' } : {}),
      IMAGING_CONFIG_DIR: join(scratch, 'config'),
      // Node's compile cache for every Node process the tests start (test/helpers.ts, COMPILE_CACHE).
      NODE_COMPILE_CACHE: join(scratch, 'node-compile-cache'),
      // Never the developer's own keychain: the keychain tests start their own Secret Service.
      IMAGING_KEYCHAIN: 'off',
      // Times for people are in the user's zone: one zone for every run of the suite.
      TZ: 'UTC',
      IMAGING_TOKEN: '',
      IMAGING_ENV: '',
      IMAGING_BASE_URL: '',
    },
  },
});
