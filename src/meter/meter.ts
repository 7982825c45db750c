import {
  constants as C,
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  type Stats,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { normaliseBaseUrl } from '../api/url.js';
import { configDir } from '../config/paths.js';
import { describeFile, mine } from '../fs/write-file.js';
import { num } from '../util/plural.js';
import { peopleTime } from '../util/time.js';

/**
 * The sandbox allowance meter: the API sends no allowance headers, so this machine counts each
 * sandbox token's successful answers in an append-only file, one short line a record, keyed by a
 * hash of origin and token (never the token). Single O_APPEND writes never interleave, so
 * concurrent commands lose no counts and need no lock. Records:
 *   <key> s <n> <first ms> <last ms>     n successes between first and last
 *   <key> set <n|-> <since ms|-> <at ms> the user's correction (auth allowance --used/--since)
 *   <key> x <at ms>                       429 sandbox_request_limit_reached
 *   <key> e <at ms>                       401 api_token_expired
 * Nothing here fails a command, blocks on a FIFO or writes through a link: anything but a regular
 * file of this user's turns the meter off for the run.
 */

export const SANDBOX_LIMIT = 2000;
const WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
/** Successes kept in memory before they are appended (and always at the end of the command). */
const FLUSH_EVERY = 25;

export interface AllowanceView {
  used: number;
  limit: number;
  since: string | null;
  ends: string | null;
  exhausted: boolean;
  expired: boolean;
  unreadable?: string;
}

/** The meter file is not a regular file of this user's: the meter is off for the run. */
export class MeterUnusable extends Error {
  override name = 'MeterUnusable';
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

function whatIs(st: Stats): string | undefined {
  if (st.isSymbolicLink()) return 'is a symbolic link (the meter never follows one)';
  if (!st.isFile()) return `is ${describeFile(st)}, not a file`;
  if (!mine(st)) return `belongs to another user (uid ${st.uid}), not to you`;
  return undefined;
}

/** Opens the meter file, never through a symlink or waiting on a FIFO: a regular file of this user's, else MeterUnusable. */
function openMeter(path: string, flags: number): number {
  let fd: number;
  try {
    fd = openSync(path, flags | C.O_NOFOLLOW | C.O_NONBLOCK, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ELOOP: a symlink (O_NOFOLLOW); EISDIR: a folder; ENXIO: a FIFO with no reader, or a socket.
    if (code !== 'ELOOP' && code !== 'EISDIR' && code !== 'ENXIO' && code !== 'EOPNOTSUPP') throw err;
    let why: string | undefined;
    try {
      why = whatIs(lstatSync(path));
    } catch {}
    throw new MeterUnusable(`${path} ${why ?? `cannot be opened (${code})`}`);
  }
  let why: string | undefined;
  try {
    why = whatIs(fstatSync(fd));
  } catch (err) {
    why = `cannot be examined (${codeOf(err)})`;
  }
  if (why === undefined) return fd;
  closeSync(fd);
  throw new MeterUnusable(`${path} ${why}`);
}

function readMeterText(path: string): string {
  let fd: number;
  try {
    fd = openMeter(path, C.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    if (err instanceof MeterUnusable) throw err;
    throw new MeterUnusable(`${path} cannot be read (${codeOf(err)})`);
  }
  try {
    return readFileSync(fd, 'latin1');
  } catch (err) {
    throw new MeterUnusable(`${path} cannot be read (${codeOf(err)})`);
  } finally {
    closeSync(fd);
  }
}

interface MeterState {
  used: number;
  since: number | undefined;
  lastSuccess: number | undefined;
  setAt: number | undefined;
  exhaustedAt: number | undefined;
  expiredAt: number | undefined;
}

export function meterPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'allowance.log');
}

/** 32 hex digits of SHA-256, from which no token can be read back. */
export function meterKey(origin: string, token: string): string {
  return process
    .getBuiltinModule('node:crypto')
    .createHash('sha256')
    .update(`imaging-allowance\n${origin}\n${token}`)
    .digest('hex')
    .slice(0, 32);
}

export function readState(path: string, key: string): MeterState {
  return foldState(readMeterText(path), key);
}

function foldState(text: string, key: string): MeterState {
  const state: MeterState = {
    used: 0,
    since: undefined,
    lastSuccess: undefined,
    setAt: undefined,
    exhaustedAt: undefined,
    expiredAt: undefined,
  };
  const latest = (a: number | undefined, b: number) => (a === undefined || b > a ? b : a);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${key} `)) continue;
    const f = line.slice(key.length + 1).split(' ');
    const n = (i: number) => (/^\d{1,15}$/.test(f[i] ?? '') ? Number(f[i]) : undefined);
    const [a, b, c] = [n(1), n(2), n(3)];
    if (f[0] === 's' && a !== undefined && b !== undefined && c !== undefined) {
      // A batch that ended before a later correction was already in the number the user gave.
      if (state.setAt !== undefined && c <= state.setAt) continue;
      state.used += a;
      if (state.since === undefined || b < state.since) state.since = b;
      state.lastSuccess = latest(state.lastSuccess, c);
    } else if (f[0] === 'set' && c !== undefined) {
      if (a !== undefined) state.used = a;
      if (b !== undefined) state.since = b;
      state.setAt = c;
    } else if (f[0] === 'x' && a !== undefined) state.exhaustedAt = latest(state.exhaustedAt, a);
    else if (f[0] === 'e' && a !== undefined) state.expiredAt = latest(state.expiredAt, a);
  }
  return state;
}

export function viewOf(state: MeterState, now: number, pending = 0): AllowanceView {
  const after = (mark: number | undefined) =>
    mark !== undefined && (state.lastSuccess === undefined || mark > state.lastSuccess);
  const ends = state.since === undefined ? undefined : state.since + WINDOW_MS;
  return {
    used: state.used + pending,
    limit: SANDBOX_LIMIT,
    since: state.since === undefined ? null : new Date(state.since).toISOString(),
    ends: ends === undefined ? null : new Date(ends).toISOString(),
    exhausted: pending === 0 && after(state.exhaustedAt),
    expired: (pending === 0 && after(state.expiredAt)) || (ends !== undefined && now >= ends),
  };
}

/** Appends records in one write (the file made 0600), only to a regular file of this user's. */
export function appendRecords(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  const fd = openMeter(path, C.O_WRONLY | C.O_APPEND | C.O_CREAT);
  try {
    const buf = Buffer.from(text, 'latin1');
    const n = writeSync(fd, buf);
    if (n !== buf.length) throw new Error(`short write (${n} of ${buf.length} bytes)`);
  } finally {
    closeSync(fd);
  }
}

/** The meter's view, or where the file cannot be read, an empty view that says why. */
function viewOrWhy(read: () => AllowanceView, key: string, now: number): AllowanceView {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof MeterUnusable)) throw err;
    return { ...viewOf(foldState('', key), now), unreadable: err.message };
  }
}

/** The allowance of a sandbox token at `baseUrl`, as this machine counted it; null without either. */
export function allowanceOf(
  ctx: { readonly env: NodeJS.ProcessEnv; now(): Date },
  baseUrl: string | undefined,
  token: string | undefined,
): AllowanceView | null {
  if (!baseUrl || !token) return null;
  let origin: string;
  try {
    origin = new URL(normaliseBaseUrl(baseUrl)).origin;
  } catch {
    return null;
  }
  const [path, key, now] = [meterPath(ctx.env), meterKey(origin, token), ctx.now().getTime()];
  return viewOrWhy(() => viewOf(readState(path, key), now), key, now);
}

export function describeView(v: AllowanceView, now: number = Date.now()): string {
  if (v.unreadable)
    return `not known: the allowance meter cannot be read (${v.unreadable}), so nothing is counted on this machine`;
  let s = `≈${num(v.used)} of ${num(v.limit)} requests used (counted on this machine)`;
  s += v.ends
    ? `, window ends ≈ ${peopleTime(v.ends)}`
    : v.used > 0
      ? ', window start not known (give it with: imaging auth allowance --since DATE)'
      : ', window not started (no success counted yet)';
  if (v.exhausted) s += '; the server said the allowance is used up (429 sandbox_request_limit_reached)';
  else if (v.expired)
    s +=
      v.ends && Date.parse(v.ends) <= now
        ? '; the 7-day window has passed'
        : '; the server said the token has expired (401 api_token_expired)';
  return s;
}

export function leftOf(v: AllowanceView): number {
  return v.exhausted ? 0 : Math.max(0, v.limit - v.used);
}

const live = new Set<Meter>();
let exitHooked = false;

/** One command's meter: written every FLUSH_EVERY successes, at `close()` and at exit. */
export class Meter {
  private pending = 0;
  private first = 0;
  private last = 0;
  /** Used before this process appended anything: for the 80%/95% warnings. */
  private before: number | undefined;
  private appended = 0;
  private problem: string | undefined;
  private offReason: string | undefined;

  constructor(
    readonly path: string,
    readonly key: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a success; after a 429 or 401 that ends the allowance, returns the meter's view for the error block. */
  answer(status: number, code: string | undefined): string | undefined {
    if (status >= 200 && status < 300) {
      if (this.offReason !== undefined) return undefined;
      const t = this.now();
      if (this.pending === 0) this.first = t;
      this.last = t;
      this.pending++;
      if (this.pending === 1) this.hookExit();
      if (this.pending >= FLUSH_EVERY) this.flush();
      return undefined;
    }
    const exhausted = status === 429 && code === 'sandbox_request_limit_reached';
    const expired = status === 401 && code === 'api_token_expired';
    if (!exhausted && !expired) return undefined;
    this.flush();
    this.write(`${this.key} ${exhausted ? 'x' : 'e'} ${this.now()}\n`);
    try {
      return describeView(
        viewOrWhy(() => this.view(), this.key, this.now()),
        this.now(),
      );
    } catch {
      return undefined;
    }
  }

  view(): AllowanceView {
    return viewOf(this.read(), this.now(), this.pending);
  }

  flush(): void {
    if (this.pending === 0) return;
    if (this.offReason !== undefined) {
      this.pending = 0;
      return;
    }
    if (this.before === undefined) {
      try {
        this.before = this.read().used;
      } catch {
        this.pending = 0;
        return;
      }
    }
    const n = this.pending;
    this.pending = 0;
    if (this.write(`${this.key} s ${n} ${this.first} ${this.last}\n`)) this.appended += n;
  }

  /**
   * Writes what is pending and says which threshold (80, 95, 100) this command's requests reached:
   * 80 and 95 once, by the command that crosses them; 100 by every command past the allowance.
   */
  close(): { crossed: number; view: AllowanceView } | undefined {
    this.flush();
    live.delete(this);
    if (this.appended === 0 || this.before === undefined || this.offReason !== undefined) return undefined;
    let view: AllowanceView;
    try {
      view = viewOf(this.read(), this.now());
    } catch {
      return undefined;
    }
    if (view.used >= view.limit) return { crossed: 100, view };
    const before = Math.min(this.before, view.used - this.appended);
    const crossed = [95, 80].find((p) => before * 100 < p * view.limit && view.used * 100 >= p * view.limit);
    return crossed === undefined ? undefined : { crossed, view };
  }

  get failure(): string | undefined {
    return this.problem;
  }

  get off(): string | undefined {
    return this.offReason;
  }

  private read(): MeterState {
    if (this.offReason !== undefined) throw new MeterUnusable(this.offReason);
    try {
      return readState(this.path, this.key);
    } catch (err) {
      if (err instanceof MeterUnusable) this.offReason ??= err.message;
      throw err;
    }
  }

  private write(text: string): boolean {
    if (this.offReason !== undefined) return false;
    try {
      appendRecords(this.path, text);
      return true;
    } catch (err) {
      if (err instanceof MeterUnusable) this.offReason ??= err.message;
      else this.problem ??= `${this.path}: ${codeOf(err)}`;
      return false;
    }
  }

  private hookExit(): void {
    live.add(this);
    if (exitHooked) return;
    exitHooked = true;
    process.on('exit', () => {
      for (const m of live) m.flush();
      live.clear();
    });
  }
}
