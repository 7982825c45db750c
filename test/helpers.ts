import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach } from 'vitest';
import type { IO } from '../src/context.js';
import { type MockOptions, type MockServer, startMockServer } from '../src/emulator/server.js';
import { type MainDeps, main } from '../src/main.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'imaging.cjs');
/**
 * Node's compile cache for the binaries the helpers start with an environment of their own: a user's
 * run has its private cache folder, and without one each start compiled the bundle again. Node's
 * own variable, so the tool's folders (reference cache, checkpoints) stay as each test sets them.
 */
export const COMPILE_CACHE = { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE };

class Capture extends Writable {
  chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void) {
    this.chunks.push(Buffer.from(chunk));
    cb();
  }
  get text() {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export interface FakeIOOptions {
  stdin?: string | Buffer;
  stdoutIsTTY?: boolean;
  stderrIsTTY?: boolean;
  stdinIsTTY?: boolean;
  columns?: number;
}

export function fakeIO(opts: FakeIOOptions = {}) {
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin = new PassThrough();
  if (opts.stdin !== undefined) stdin.end(opts.stdin);
  else stdin.end();
  const io: IO = {
    stdout,
    stderr,
    stdin,
    stdoutIsTTY: opts.stdoutIsTTY ?? false,
    stderrIsTTY: opts.stderrIsTTY ?? false,
    stdinIsTTY: opts.stdinIsTTY ?? false,
    columns: opts.stdoutIsTTY ? (opts.columns ?? 100) : undefined,
  };
  return {
    io,
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    /** Standard output as written (a workbook, say, is not UTF-8 text). */
    stdoutBytes: () => Buffer.concat(stdout.chunks),
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions extends FakeIOOptions {
  env?: NodeJS.ProcessEnv;
  deps?: Partial<MainDeps>;
}

/** Runs the CLI in-process with fake streams (the gh `iostreams.Test()` pattern). */
export async function run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await runRaw(argv, opts);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** As run(), with standard output also as the bytes written (what `> FILE` would hold). */
export async function runRaw(
  argv: string[],
  opts: RunOptions = {},
): Promise<RunResult & { stdoutBytes: Buffer }> {
  const { io, stdout, stderr, stdoutBytes } = fakeIO(opts);
  const code = await main(argv, {
    io,
    env: { PATH: process.env.PATH, IMAGING_KEYCHAIN: 'off', ...opts.env },
    clientOverrides: { baseDelayMs: 1, ...opts.deps?.clientOverrides },
    ...opts.deps,
  });
  return { code, stdout: stdout(), stderr: stderr(), stdoutBytes: stdoutBytes() };
}

export function tempDir(prefix = 'imaging-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * A folder to mount a test's tmpfs under (`<folder>/disk`, `<folder>/ro`), named after this run:
 * the vitest process that started the worker, whose teardown (test/global-setup.ts) unmounts
 * whatever of its own is left, and never another run's (two runs at once on one machine).
 */
export function tmpfsFolder(kind: string): { path: string; cleanup: () => void } {
  return tempDir(`imaging-${kind}-tmpfs-${process.ppid}-`);
}

/**
 * A real small file system (`options`: mount's, e.g. size=64k,mode=0700) in a folder of tmpfsFolder(kind);
 * mounting needs root (CI runs as root): elsewhere `error` says why, and the test skips with it.
 */
export function mountTmpfs(kind: string, options: string): { path: string; error?: string } {
  const path = join(tmpfsFolder(kind).path, 'disk');
  mkdirSync(path);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', path], { stdio: 'pipe' });
    return { path };
  } catch (err) {
    rmSync(join(path, '..'), { recursive: true, force: true });
    return { path, error: String((err as { stderr?: Buffer }).stderr ?? err).trim() };
  }
}

/** Starts the emulator for a test file; `env()` gives the environment that points the CLI at it. */
export function mockFixture(options: MockOptions = {}) {
  let mock: MockServer | undefined;
  let dir: { path: string; cleanup: () => void } | undefined;
  // The emulator reads its options on every request: this object is the one it was started with.
  const live: MockOptions = { port: 0, ...options };
  return {
    async start() {
      mock = await startMockServer(live);
      dir = tempDir();
      return mock;
    },
    async stop() {
      await mock?.close();
      dir?.cleanup();
    },
    get mock(): MockServer {
      if (!mock) throw new Error('mock not started');
      return mock;
    },
    get configDir(): string {
      if (!dir) throw new Error('mock not started');
      return dir.path;
    },
    env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
      return {
        IMAGING_ENV: 'local',
        IMAGING_BASE_URL: this.mock.url,
        IMAGING_CONFIG_DIR: this.configDir,
        ...extra,
      };
    },
    /**
     * Changes the emulator's latency from the next answer on: a slow emulator keeps a real process
     * busy only while a test needs it mid-run (to signal it, to fill a disk), not for the rest.
     */
    setLatency(ms: number | undefined) {
      live.latencyMs = ms ?? options.latencyMs;
    },
    /** Lets an auto-book request's own webhook_url name this loopback port (as --allow-webhook-port). */
    allowWebhookPort(port: number) {
      live.webhookPorts = [...(live.webhookPorts ?? []), port];
    },
    /** API requests the emulator has seen since the last reset. */
    apiRequests() {
      return this.mock.requests.filter((r) => r.path.startsWith('/api/'));
    },
    reset() {
      this.mock.requests.length = 0;
    },
  };
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** A throwaway HTTP server for a test: returns its URL and the requests it saw. */
export async function testServer(handler: Handler, host = '127.0.0.1') {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: body.toString('utf8'),
      });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Runs the built binary end to end. */
export function spawnCli(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}) {
  return execa(process.execPath, [BIN, ...args], {
    reject: false,
    env: {
      // The run's own folders (vitest.config.ts), never the user's: the environment is not inherited.
      IMAGING_CONFIG_DIR: process.env.IMAGING_CONFIG_DIR,
      IMAGING_CACHE_DIR: process.env.IMAGING_CACHE_DIR,
      NO_COLOR: '1',
      IMAGING_KEYCHAIN: 'off',
      ...COMPILE_CACHE,
      ...opts.env,
    },
    extendEnv: false,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
    timeout: 20_000,
  });
}

/**
 * One command, answered as spawnCli answers (exit code, stdout and stderr without their last line
 * break): through the built binary when `real`, else in-process (the same code, without a process
 * start). A loop over many inputs of one behaviour keeps one real run and checks the rest in-process.
 */
export async function cli(
  real: boolean,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  if (real) {
    const r = await spawnCli(args, opts);
    return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
  }
  const r = await run(args, {
    env: { IMAGING_CONFIG_DIR: process.env.IMAGING_CONFIG_DIR, NO_COLOR: '1', ...opts.env },
    ...(opts.input !== undefined ? { stdin: opts.input } : {}),
  });
  const chomp = (s: string) => s.replace(/\r?\n$/, '');
  return { exitCode: r.code, stdout: chomp(r.stdout), stderr: chomp(r.stderr) };
}

/**
 * Starts the real binary with its own stdio (0-2 only, unless `extra` hands over more); children
 * still running when a test ends are killed (a regressed build could hang). Call in a describe block.
 */
export function launcher() {
  const launched = new Set<ChildProcess>();
  afterEach(() => {
    for (const c of launched) c.kill('SIGKILL');
    launched.clear();
  });
  return function launch(args: string[], env: NodeJS.ProcessEnv, extra: number[] = []) {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...COMPILE_CACHE, ...env, PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe', ...extra],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const done = new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      stdout: string;
      stderr: string;
    }>((resolve) =>
      child.on('close', (code, signal) => {
        launched.delete(child);
        resolve({ code, signal, stdout: out, stderr: err });
      }),
    );
    launched.add(child);
    return { child, done };
  };
}

/** Waits for a real condition (a file appearing), polling. */
export async function until<T>(probe: () => T | undefined, what = 'a condition'): Promise<T> {
  for (let i = 0; i < 1000; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
