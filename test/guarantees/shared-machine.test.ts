import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { BIN, cli, fakeIO, launcher, mockFixture, run, spawnCli, tempDir, until } from '../helpers.js';
import '../reliability.js';

/**
 * Another local user on the same machine: `nobody` plants a FIFO, a symlink or a file where an
 * export or the config store would write, or runs the config folder. Recreated for real with
 * setpriv; those tests need root (CI runs as root). A refusal before any request runs in-process
 * (the same checks on the same files); writes, concurrent updates and signals run the real binary.
 */

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const asNobody = isRoot && hasSetpriv;
const skipNote = asNobody ? '' : ' (skipped: needs root and setpriv to act as nobody)';
const nobody = (...cmd: string[]) =>
  execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...cmd]);

const fx = mockFixture({ referrals: 250 });
let reference = '';
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  await fx.start();
  const d = tempDir();
  try {
    const r = await run(['referrals', 'export', '-o', join(d.path, 'ref.csv')], { env: fx.env() });
    expect(r.code).toBe(0);
    reference = readFileSync(join(d.path, 'ref.csv'), 'utf8');
  } finally {
    d.cleanup();
  }
});
afterAll(() => fx.stop());
beforeEach(() => {
  fx.reset();
  dir = tempDir();
  chmodSync(dir.path, 0o755); // nobody may pass through
  return () => dir.cleanup();
});

/** A sticky folder anyone can write to, as /tmp. */
function sticky(): string {
  const shared = join(dir.path, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  return shared;
}

describe.skipIf(!asNobody)(`an export into a folder others can write to${skipNote}`, () => {
  it("nobody's FIFO at the target: exit 2 before any request, naming it and its owner", async () => {
    const target = join(sticky(), 'daily.csv');
    nobody('mkfifo', target);
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: fx.env() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`cannot write ${target}: ${target} is a named pipe (FIFO) owned by nobody`);
    expect(r.stderr).toContain('a folder others can write to');
    expect(fx.apiRequests()).toEqual([]);
    expect(lstatSync(target).isFIFO()).toBe(true);
  });

  it("nobody's symlink to root's 0600 file: exit 2, never followed, the file untouched", async () => {
    const secret = join(dir.path, 'secret');
    writeFileSync(secret, 'root only\n', { mode: 0o600 });
    const target = join(sticky(), 'daily.csv');
    nobody('ln', '-s', secret, target);
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: fx.env() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('is a symlink owned by nobody');
    expect(fx.apiRequests()).toEqual([]);
    expect(readFileSync(secret, 'utf8')).toBe('root only\n');
    expect(lstatSync(secret).mode & 0o777).toBe(0o600);
    expect(lstatSync(target).isSymbolicLink()).toBe(true);
  });

  it("nobody's file at the target: exit 2, left as it is", async () => {
    const target = join(sticky(), 'daily.csv');
    nobody('sh', '-c', `echo theirs > "${target}"`);
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: fx.env() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('is a file owned by nobody');
    expect(readFileSync(target, 'utf8')).toBe('theirs\n');
  });

  it('a symlink of nobody in the path to the target is not followed either', async () => {
    const shared = sticky();
    const mine = join(dir.path, 'mine');
    mkdirSync(mine);
    nobody('ln', '-s', mine, join(shared, 'out'));
    const r = await cli(false, ['referrals', 'export', '-o', join(shared, 'out', 'x.csv')], {
      env: fx.env(),
    });
    expect(r.exitCode).toBe(2);
    expect(readdirSync(mine)).toEqual([]);
  });

  it('my own FIFO there works: its reader gets the whole export', async () => {
    const target = join(sticky(), 'pipe');
    execFileSync('mkfifo', [target]);
    const chunks: Buffer[] = [];
    const read = new Promise<string>((resolve, reject) => {
      createReadStream(target)
        .on('data', (c) => chunks.push(c as Buffer))
        .on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
        .on('error', reject);
    });
    // In-process: the checks that refuse nobody's FIFO pass mine; output-targets runs the binary
    // into a FIFO.
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: fx.env() });
    expect(r.exitCode).toBe(0);
    expect(await read).toBe(reference);
  });
});

describe('process substitution', () => {
  it('`-o >(gzip > f.gz)` gets the whole export', async () => {
    const gz = join(dir.path, 'f.gz');
    // Started asynchronously: the emulator answers from this process.
    const child = spawn(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-c',
        `node "$BIN" referrals export -o >(gzip > "${gz}"); s=$?; wait; exit $s`,
      ],
      { env: { ...fx.env(), PATH: process.env.PATH, BIN }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const status = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('error');
    expect(status).toBe(0);
    expect(gunzipSync(readFileSync(gz)).toString('utf8')).toBe(reference);
  });
});

describe.skipIf(!asNobody)(`the config folder is trusted as ssh trusts ~/.ssh${skipNote}`, () => {
  it("another user's folder: exit 1, naming the path, its owner and the fix; nothing sent", async () => {
    const cfg = join(dir.path, 'cfg');
    mkdirSync(cfg, { mode: 0o755 });
    writeFileSync(
      join(cfg, 'config.json'),
      JSON.stringify({ environments: { sandbox: { base_url: fx.mock.url } } }),
    );
    chownSync(join(cfg, 'config.json'), NOBODY, NOBODY);
    chownSync(cfg, NOBODY, NOBODY);
    const r = await cli(false, ['--env', 'sandbox', 'auth', 'login', '--with-token'], {
      env: { IMAGING_CONFIG_DIR: cfg },
      input: 'new-production-token\n',
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`the config folder ${cfg} belongs to nobody`);
    expect(r.stderr).toContain('chown');
    expect(r.stderr).toContain('chmod 700');
    expect(fx.apiRequests()).toEqual([]);
  });

  it("another user's config.json in my folder: exit 1 naming it and its owner", async () => {
    const cfg = join(dir.path, 'cfg');
    mkdirSync(cfg, { mode: 0o700 });
    writeFileSync(join(cfg, 'config.json'), '{}');
    chownSync(join(cfg, 'config.json'), NOBODY, NOBODY);
    const r = await cli(false, ['config', 'list'], { env: { IMAGING_CONFIG_DIR: cfg } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`the config file ${join(cfg, 'config.json')} belongs to nobody`);
  });
});

// The refusals above and below come before anything is read, sent or written: in-process, the same
// checks on the same files. What is written (modes, a lock shared by processes) runs the binary.
describe('the config folder and file', () => {
  it('a folder others can write to: exit 1, with chmod 700 as the fix', async () => {
    const cfg = join(dir.path, 'cfg');
    mkdirSync(cfg);
    chmodSync(cfg, 0o777);
    const r = await cli(false, ['config', 'list'], { env: { IMAGING_CONFIG_DIR: cfg } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`the config folder ${cfg} can be written by others`);
    expect(r.stderr).toContain(`chmod 700 "${cfg}"`);
  });

  it('a symlinked config.json is never followed: refused, and the file it points to is not rewritten', async () => {
    const cfg = join(dir.path, 'cfg');
    mkdirSync(cfg, { mode: 0o700 });
    const other = join(dir.path, 'other.json');
    writeFileSync(other, '{"env":"local"}');
    symlinkSync(other, join(cfg, 'config.json'));
    const r = await cli(false, ['config', 'set', 'env', 'production'], { env: { IMAGING_CONFIG_DIR: cfg } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('is a symlink, which is never followed');
    expect(readFileSync(other, 'utf8')).toBe('{"env":"local"}');
  });

  // Written 0600 in a 0700 folder, no temporary or lock file left: the concurrent writes below.
});

describe('concurrent config writes', () => {
  it('ten `config set` at once (four processes, six in this one once the first has written) keep all ten values, in a 0600 file in a 0700 folder, nothing else left', async () => {
    const cfg = join(dir.path, 'new', 'cfg'); // neither folder there yet
    const sets: string[][] = [['env', 'production']];
    for (const env of ['sandbox', 'production', 'local']) {
      sets.push(['base-url', `https://${env}.example.com`, '--env', env]);
      sets.push(['path.payments', `/api/v2/referrals/{id}/payments-${env}`, '--env', env]);
      sets.push(['path.notifications', `/api/v2/referrals/{id}/notes-${env}`, '--env', env]);
    }
    // Every writer takes the same lock on the same file: four processes make the folders, and six
    // writers in this process join them once the first has written, while the others still run.
    const set = (real: boolean, s: string[]) =>
      cli(real, ['config', 'set', ...s], { env: { IMAGING_CONFIG_DIR: cfg } });
    const processes = sets.slice(0, 4).map((s) => set(true, s));
    await until(() => (existsSync(join(cfg, 'config.json')) ? true : undefined), 'the first write');
    const results = await Promise.all([...processes, ...sets.slice(4).map((s) => set(false, s))]);
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    const stored = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'));
    expect(stored.env).toBe('production');
    for (const env of ['sandbox', 'production', 'local']) {
      expect(stored.environments[env]).toEqual({
        base_url: `https://${env}.example.com`,
        paths: {
          payments: `/api/v2/referrals/{id}/payments-${env}`,
          notifications: `/api/v2/referrals/{id}/notes-${env}`,
        },
      });
    }
    expect(statSync(cfg).mode & 0o777).toBe(0o700);
    expect(statSync(join(cfg, 'config.json')).mode & 0o777).toBe(0o600);
    expect(readdirSync(cfg)).toEqual(['config.json']);
  });

  it('a `config set` writes nothing while another live process holds the lock file, then writes once it is gone', async () => {
    // A lock held by another writer is waited for: without it, concurrent writers lose each other's values.
    const cfg = join(dir.path, 'held-lock');
    mkdirSync(cfg, { mode: 0o700 });
    const lock = join(cfg, 'config.json.lock');
    writeFileSync(lock, String(process.pid), { mode: 0o600 }); // its holder: this process, alive
    let ended = false;
    const setting = cli(true, ['config', 'set', 'env', 'sandbox'], {
      env: { IMAGING_CONFIG_DIR: cfg },
    }).finally(() => {
      ended = true;
    });
    // Long past a start-up: a writer that ignored the lock would have written and exited by now.
    await new Promise((r) => setTimeout(r, 1500));
    expect(ended).toBe(false);
    expect(existsSync(join(cfg, 'config.json'))).toBe(false);
    rmSync(lock);
    const r = await setting;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).env).toBe('sandbox');
    expect(readdirSync(cfg)).toEqual(['config.json']);
  });

  it('a logout is not undone by an `auth login` of another environment waiting for its token', async () => {
    const cfg = join(dir.path, 'cfg');
    mkdirSync(cfg, { mode: 0o700 });
    const url = fx.mock.url;
    writeFileSync(
      join(cfg, 'config.json'),
      JSON.stringify({
        environments: {
          sandbox: { base_url: url },
          production: { base_url: url, token: 'prod-secret-1234', token_origin: url },
        },
      }),
      { mode: 0o600 },
    );
    // In-process, with a standard input of our own: the login has read the config once it reads it.
    const { io } = fakeIO();
    const stdin = new PassThrough();
    const login = main(['auth', 'login', '--env', 'sandbox', '--with-token', '--no-verify'], {
      io: { ...io, stdin },
      env: { IMAGING_CONFIG_DIR: cfg, PATH: process.env.PATH },
    });
    await until(() => (stdin.listenerCount('data') > 0 ? true : undefined));
    const out = await spawnCli(['auth', 'logout', '--env', 'production'], {
      env: { IMAGING_CONFIG_DIR: cfg },
    });
    expect(out.exitCode).toBe(0);
    stdin.end('sandbox-token-5678\n');
    expect(await login).toBe(0);
    const stored = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'));
    expect(stored.environments.production).toEqual({ base_url: url });
    expect(stored.environments.sandbox.token).toBe('sandbox-token-5678');
  });
});

describe.skipIf(!isRoot)('another user swaps the temporary file for a symlink', () => {
  // Still running when the folder is swapped: 60 pages of 10, 15 rounds of four at once, as long a
  // run as 3,000 referrals in pages of 50, with a fifth of the records to write once the wait ends.
  const slow = mockFixture({ referrals: 600, latencyMs: 100 });

  let dir: ReturnType<typeof tempDir>;

  const STACK = /\n\s+at .+:\d+:\d+/;

  beforeAll(() => slow.start());

  afterAll(() => slow.stop());

  beforeEach(() => {
    const own = tempDir(); // cleaned by its own test's hook, also when tests run concurrently
    dir = own;
    return () => {
      slow.setLatency(undefined);
      own.cleanup();
    };
  });

  const launch = launcher();

  const partialIn = (folder: string) => () => readdirSync(folder).find((f) => f.endsWith('.partial'));

  /** shared: 0777, not sticky; victim/passwd: root's, elsewhere. The attacker runs as nobody. */
  function scene() {
    execFileSync('chmod', ['0755', dir.path]);
    const shared = join(dir.path, 'shared');
    const victim = join(dir.path, 'victim');
    mkdirSync(shared);
    mkdirSync(victim);
    execFileSync('chmod', ['0777', shared]);
    writeFileSync(join(victim, 'passwd'), 'root:x:0:0\n');
    return { shared, victim, target: join(shared, 'passwd') };
  }
  function attack(shared: string, victim: string, partial: string) {
    execFileSync('setpriv', [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      'sh',
      '-c',
      `mv "${shared}/${partial}" "${shared}/moved" && ln -s "${victim}/passwd" "${shared}/${partial}"`,
    ]);
  }

  it('the export fails naming it; nothing outside is touched, the moved file is emptied', async () => {
    const { shared, victim, target } = scene();
    const run = launch(['referrals', 'export', '-o', target, '--per-page', '10'], slow.env());
    const partial = await until(partialIn(shared), 'the temporary file');
    attack(shared, victim, partial);
    slow.setLatency(0); // the swap is done: the rest of the export need not wait
    const r = await run.done;
    expect(r.stderr).not.toMatch(STACK);
    expect(readFileSync(join(victim, 'passwd'), 'utf8')).toBe('root:x:0:0\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('moved away by someone else');
    expect(statSync(join(shared, 'moved')).size).toBe(0); // emptied: no patient data left
    expect(existsSync(target)).toBe(false);
  });

  it('the same, interrupted by SIGINT: exit 130, nothing outside touched, no data left anywhere', async () => {
    const { shared, victim, target } = scene();
    const run = launch(['referrals', 'export', '-o', target, '--per-page', '10'], slow.env());
    const partial = await until(partialIn(shared), 'the temporary file');
    attack(shared, victim, partial);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    expect(readFileSync(join(victim, 'passwd'), 'utf8')).toBe('root:x:0:0\n');
    expect(statSync(join(shared, 'moved')).size).toBe(0);
    expect(lstatSync(join(shared, partial)).isSymbolicLink()).toBe(true); // theirs, left alone
  });
});
