import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, mockFixture, ROOT, tempDir } from '../helpers.js';

/**
 * Issue 8 item 5: every input (files, stdin, pipes, FIFOs, devices, process substitution) is read
 * as a stream with a byte cap. Run on the real binary with real FIFOs and /dev/zero.
 */

const fx = mockFixture({ referrals: 3 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  fx.reset();
  dir = tempDir();
  writeFileSync(join(dir.path, 'secret'), 's3cret\n');
  return () => dir.cleanup();
});

const PROBE = join(ROOT, 'scripts', 'rss-probe.mjs');
const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

/** Runs the binary with the RSS probe; resolves with exit code, stderr, peak RSS (MB) and seconds. */
async function runBin(args: string[], stdin: 'ignore' | number = 'ignore') {
  const rssFile = join(dir.path, `rss-${Math.random()}`);
  const child = spawn(process.execPath, ['--import', PROBE, BIN, ...args], {
    env: { ...fx.env(), PATH: process.env.PATH, NO_COLOR: '1', IMAGING_RSS_FILE: rssFile },
    stdio: [stdin, 'pipe', 'pipe'],
    cwd: dir.path,
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const started = Date.now();
  const code = await exitOf(child);
  const seconds = (Date.now() - started) / 1000;
  const rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024 / 1024;
  return { code, stderr, seconds, rssMb };
}

const SIG = ['--header', 'X-Service-Timestamp: 1', '--header', 'X-Service-Signature: v1=00'];

describe('a device that never ends is refused at the cap, fast and with bounded memory', () => {
  it.for([
    [
      'webhook verify --body',
      ['webhook', 'verify', '--body', '/dev/zero', '--secret-file', 'secret', ...SIG],
      '5 MiB',
    ],
    [
      'webhook verify --request',
      ['webhook', 'verify', '--request', '/dev/zero', '--secret-file', 'secret'],
      '5 MiB',
    ],
    ['webhook sign --body', ['webhook', 'sign', '--body', '/dev/zero', '--secret-file', 'secret'], '5 MiB'],
    [
      'a secret file',
      ['webhook', 'sign', '--body', 'secret', '--event', 'x', '--secret-file', '/dev/zero'],
      '64 KiB',
    ],
    ['referrals create --file', ['referrals', 'create', '--file', '/dev/zero'], '10 MiB'],
    ['api --input', ['api', 'POST', '/referrals', '--input', '/dev/zero'], '10 MiB'],
  ] as const)('%s /dev/zero: exit 2 within a second, nothing sent', async ([, args, cap]) => {
    const r = await runBin([...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`/dev/zero is larger than ${cap}`);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    // Node itself starts at ~45 MB; the cap is at most 10 MiB.
    expect(r.rssMb).toBeLessThan(120);
    expect(r.seconds).toBeLessThan(2); // ~0.15 s measured; headroom for a loaded CI machine
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('standard input that never ends', () => {
  it('referrals create --file - < /dev/zero: exit 2 at 10 MiB, nothing sent', async () => {
    const fd = openSync('/dev/zero', 'r');
    try {
      const r = await runBin(['referrals', 'create', '--file', '-'], fd);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('standard input (--file -) is larger than 10 MiB');
      expect(r.rssMb).toBeLessThan(120);
      expect(r.seconds).toBeLessThan(2);
    } finally {
      closeSync(fd);
    }
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('a FIFO or a pipe fed more than the cap', () => {
  it('referrals create --file FIFO with 20 MB: exit 2, nothing POSTed to the emulator', async () => {
    const fifo = join(dir.path, 'body.fifo');
    execFileSync('mkfifo', [fifo]);
    // The test's own writer: 20 MB into the FIFO (it gets SIGPIPE when the reader stops).
    const writer = spawn('sh', ['-c', `head -c 20000000 /dev/zero | tr '\\0' ' ' > "${fifo}"`], {
      stdio: 'ignore',
    });
    const r = await runBin(['referrals', 'create', '--file', fifo]);
    writer.kill('SIGKILL');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is larger than 10 MiB');
    expect(r.rssMb).toBeLessThan(120);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('webhook verify --request <(50 MB) through process substitution: refused at 5 MiB', async () => {
    const child = spawn(
      'bash',
      [
        '-c',
        `exec "${process.execPath}" "${BIN}" webhook verify --request <(head -c 50000000 /dev/zero) --secret-file secret`,
      ],
      { cwd: dir.path, env: { ...fx.env(), PATH: process.env.PATH, NO_COLOR: '1' } },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    expect(await exitOf(child)).toBe(2);
    expect(stderr).toMatch(/--request: \/dev\/fd\/\d+ is larger than 5 MiB/);
  });

  it('a FIFO within the cap is read whole (the writer comes after the reader)', async () => {
    const fifo = join(dir.path, 'ok.fifo');
    execFileSync('mkfifo', [fifo]);
    const body = JSON.stringify({ event_name: 'referral.updated' });
    const reading = runBin([
      'webhook',
      'sign',
      '--body',
      fifo,
      '--secret-file',
      'secret',
      '--timestamp',
      '1',
    ]);
    writeFileSync(fifo, body); // blocks until the CLI has opened the FIFO for reading
    const r = await reading;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('a FIFO that never gets a writer: a signal stops the real binary at once', () => {
  it.for<['SIGINT' | 'SIGTERM', number]>([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])('%s: exit %i', async ([signal, code]) => {
    const fifo = join(dir.path, 'never.fifo');
    execFileSync('mkfifo', [fifo]);
    const child = spawn(process.execPath, [BIN, 'referrals', 'create', '--file', fifo], {
      env: { ...fx.env(), PATH: process.env.PATH, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = exitOf(child);
    // Ready when the CLI holds the FIFO open for reading (its descriptor shows in /proc).
    const until = Date.now() + 10_000;
    const { readdirSync, readlinkSync } = await import('node:fs');
    const holdsFifo = () => {
      try {
        return readdirSync(`/proc/${child.pid}/fd`).some((f) => {
          try {
            return readlinkSync(`/proc/${child.pid}/fd/${f}`) === fifo;
          } catch {
            return false;
          }
        });
      } catch {
        return false;
      }
    };
    while (!holdsFifo()) {
      if (Date.now() > until) throw new Error('the CLI never opened the FIFO');
      await new Promise((r) => setTimeout(r, 20));
    }
    const sent = Date.now();
    child.kill(signal);
    expect(await exited).toBe(code);
    expect(Date.now() - sent).toBeLessThan(1000);
    expect(stderr).toContain('interrupted');
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

/** Polls (no fixed sleep) until `ready()` holds, for at most 10 s. */
async function until(ready: () => boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
/** The file status flags (octal) of descriptor `fd` of process `pid`, from /proc. */
const fdFlags = (pid: number, fd: number) => {
  try {
    const m = /flags:\s+([0-7]+)/.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
    return m ? Number.parseInt(m[1]!, 8) : 0;
  } catch {
    return 0;
  }
};
const O_NONBLOCK = 0o4000;

describe('a read that waits for ever stops at the first signal', () => {
  it('auth login --with-token on a pipe with no writer yet: one SIGTERM ends it (143)', async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        '--env',
        'local',
        '--base-url',
        fx.env().IMAGING_BASE_URL!,
        'auth',
        'login',
        '--with-token',
        '--no-verify',
      ],
      {
        env: { PATH: process.env.PATH, NO_COLOR: '1', IMAGING_CONFIG_DIR: dir.path },
        stdio: ['pipe', 'pipe', 'pipe'], // the test holds the pipe open and writes nothing
      },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = exitOf(child);
    // Reading: Node makes its end of the pipe non-blocking when the command first touches stdin.
    await until(() => (fdFlags(child.pid!, 0) & O_NONBLOCK) !== 0, 'the CLI reads standard input');
    const sent = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(Date.now() - sent).toBeLessThan(1000);
    expect(stderr).toContain('interrupted');
    child.stdin!.destroy();
  });

  // /dev/ptmx opens a new terminal whose other side nobody holds: a read of it never returns. A
  // blocking read in Node's thread pool kept the process alive after "interrupted" until kill -9.
  it.for<['SIGINT' | 'SIGTERM', number]>([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])(
    'webhook verify --body /dev/ptmx (a terminal that never answers): %s ends it (%i)',
    async ([signal, code]) => {
      const child = spawn(
        process.execPath,
        [BIN, 'webhook', 'verify', '--body', '/dev/ptmx', '--secret-file', 'secret', ...SIG],
        {
          env: { ...fx.env(), PATH: process.env.PATH, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
          cwd: dir.path,
        },
      );
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      const exited = exitOf(child);
      const { readdirSync, readlinkSync } = await import('node:fs');
      const holdsPtmx = () => {
        try {
          return readdirSync(`/proc/${child.pid}/fd`).some((f) => {
            try {
              return readlinkSync(`/proc/${child.pid}/fd/${f}`) === '/dev/ptmx';
            } catch {
              return false;
            }
          });
        } catch {
          return false;
        }
      };
      await until(holdsPtmx, 'the CLI opens /dev/ptmx');
      const sent = Date.now();
      child.kill(signal);
      expect(await exited).toBe(code);
      expect(Date.now() - sent).toBeLessThan(1000);
      expect(stderr).toContain('interrupted');
    },
  );
});
