import { createHash, randomBytes } from 'node:crypto';
import {
  constants as C,
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { IdSet } from '../api/idset.js';
import type { PageMeta, WrittenIds } from '../api/pages.js';
import { normaliseBaseUrl } from '../api/url.js';
import { privateFolder } from '../cache/folder.js';
import { CliError, UsageError } from '../errors.js';
import { mine, readNoFollow, sameFile, statIfAny, withLock, writeFileAtomic } from '../fs/write-file.js';
import { onForcedExit } from '../util/cleanup.js';
import { hiddenName } from '../util/hidden-name.js';
import { num, count as plural } from '../util/plural.js';
import type { AtomicFile } from './output-file.js';

// A stopped `-o` export keeps its complete pages beside the target in a private folder (data.partial,
// state.json); --resume continues them, refusing a list that shifted at the seam. The state's blocks
// are reserved at the start, so a full disk can still take the checkpoint.

const MAX_AGE_MS = 24 * 3600 * 1000;
/** A checkpoint saved more than this after now is refused (the clock went back). */
const FUTURE_SLACK_MS = 60_000;
const STATE = 'state.json';
const DATA = 'data.partial';
/** Bytes reserved for state.json: ample for its fields and 100 ids. */
const STATE_RESERVE = 16 * 1024;
/** Page marks kept in memory: the last complete page on disk is always among the last few. */
const MARKS_KEPT = 64;
const CHUNK = 1 << 20;

type Identity = Record<string, unknown>;

interface SummarySeed {
  referrals: number;
  rows: number;
  pages: number;
  duplicates: number;
  expected: number | undefined;
}

export interface PageMark {
  page: number;
  bytes: number;
  summary: SummarySeed;
  /** Whether a JSON record has been written (the next one starts with a comma). */
  wroteRecord: boolean;
  lastIds: string[];
  totalPages: number | undefined;
}

export interface ResumePoint {
  page: number;
  prefix: () => AsyncIterable<Buffer>;
  summary: SummarySeed;
  wroteRecord: boolean;
  lastIds: string[];
  start: {
    page: number;
    received: number;
    written: WrittenIds;
    check: (items: unknown[], meta: PageMeta | undefined, requestId: string | undefined) => void;
  };
}

interface State {
  version: 1;
  identity: Identity;
  pages: number;
  bytes: number;
  sha256: string;
  summary: Omit<SummarySeed, 'expected'> & { expected: number | null };
  wroteRecord: boolean;
  lastIds: string[];
  totalPages: number | null;
  started: string;
  saved: string;
}

/** This user's, and closed to everyone else (0700 folder, 0600 file). */
const isPrivate = (st: Stats) => mine(st) && (st.mode & 0o077) === 0;

/**
 * Sandbox data is synthetic: checkpoints are kept by default, but only for the sandbox's configured
 * base URL. Production holds real patient data, and `local` may be any server: only with
 * `--resumable` (or `--resume`).
 */
export function keepsCheckpoints(
  env: string,
  resumable: boolean | undefined,
  baseUrl?: string,
  sandboxBaseUrl?: string,
): boolean {
  if (resumable === true) return true;
  if (env !== 'sandbox' || !baseUrl || !sandboxBaseUrl) return false;
  try {
    return normaliseBaseUrl(baseUrl) === normaliseBaseUrl(sandboxBaseUrl);
  } catch {
    return false;
  }
}

/** The command that continues a stopped export: without the --param values (they may hold patient data). */
export function continueCommand(argv: readonly string[]): string {
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (a === '--param') i++;
    else if (!a.startsWith('--param=')) args.push(a);
  }
  // The same command continues an export started with --resume-or-start.
  if (!args.includes('--resume') && !args.includes('--resume-or-start')) args.push('--resume');
  return ['imaging', ...args].map(quote).join(' ');
}

/** The saved checkpoints are listed in the private cache folder, so any export can sweep expired ones. */
function changeRegistry(env: NodeJS.ProcessEnv, create: boolean, change: (dirs: string[]) => string[]): void {
  const folder = privateFolder(env, create);
  if (!('dir' in folder)) return;
  const path = join(folder.dir, 'checkpoints');
  if (!create && !existsSync(path)) return;
  try {
    withLock(`${path}.lock`, () => {
      let dirs: string[] = [];
      try {
        dirs = readPrivate(path, 1 << 20)
          .toString('utf8')
          .split('\n')
          .filter((l) => l.startsWith('/'));
      } catch {}
      writeFileAtomic(
        path,
        change(dirs)
          .map((d) => `${d}\n`)
          .join(''),
      );
    });
  } catch {}
}

export function sweepExpired(env: NodeJS.ProcessEnv, now: Date): number {
  let removed = 0;
  changeRegistry(env, false, (dirs) =>
    dirs.filter((dir) => {
      const found = inspect(dir);
      if (found === undefined || 'problem' in found) return false;
      const age = now.getTime() - Date.parse(found.state.saved);
      if (age <= MAX_AGE_MS && age >= -FUTURE_SLACK_MS) return true;
      if (removeCheckpoint(dir)) removed++;
      return false;
    }),
  );
  return removed;
}

type Found = { state: State } | { problem: string } | undefined;

function inspect(dir: string): Found {
  let st: Stats | undefined;
  try {
    st = statIfAny(dir);
  } catch (err) {
    return { problem: `cannot read it (${(err as Error).message})` };
  }
  if (!st) return undefined;
  if (!st.isDirectory() || !isPrivate(st))
    return { problem: 'it is not a private folder of yours (0700), so it is left alone' };
  let text: string;
  try {
    text = readPrivate(join(dir, STATE), STATE_RESERVE * 4).toString('utf8');
  } catch (err) {
    return { problem: `its state is missing or unreadable (${(err as Error).message})` };
  }
  let state: State;
  try {
    state = JSON.parse(text) as State;
  } catch {
    return { problem: 'its state is not valid JSON' };
  }
  if (
    state?.version !== 1 ||
    typeof state.identity !== 'object' ||
    !Number.isSafeInteger(state.pages) ||
    !Number.isSafeInteger(state.bytes) ||
    typeof state.sha256 !== 'string' ||
    typeof state.summary !== 'object' ||
    !Array.isArray(state.lastIds) ||
    Number.isNaN(Date.parse(state.saved))
  )
    return { problem: 'its state is not one this version of imaging wrote' };
  const data = statIfAny(join(dir, DATA));
  if (!data?.isFile() || !isPrivate(data) || data.size !== state.bytes)
    return { problem: `its data is missing or is not the ${state.bytes} bytes its state records` };
  return { state };
}

function readPrivate(path: string, max: number): Buffer {
  return readNoFollow(path, (st) => {
    if (!st.isFile() || !isPrivate(st)) throw new Error('not a private file of yours');
    if (st.size > max) throw new Error('too large');
  });
}

function removeFiles(dir: string): void {
  for (const name of [STATE, DATA]) {
    try {
      unlinkSync(join(dir, name));
    } catch {}
  }
}

/** Removes a checkpoint folder of ours; anything else is left alone. */
function removeCheckpoint(dir: string): boolean {
  try {
    const st = statIfAny(dir);
    if (!st?.isDirectory() || !mine(st)) return false;
    removeFiles(dir);
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

const ago = (ms: number) => {
  const min = Math.max(0, Math.round(ms / 60_000));
  return min < 90 ? `${min} min ago` : `${Math.round(min / 60)} h ago`;
};

const OPTION_NAMES: Record<string, string> = {
  env: 'environment',
  baseUrl: 'base URL',
  format: 'format',
  rows: '--rows',
  perPage: '--per-page',
  params: '--param',
  visitStatuses: '--visit-status',
  formulaGuard: '--no-formula-guard',
  bom: '--bom',
  fields: '--fields',
};
/** Options whose values are shown when they differ (the others may hold patient data or be long). */
const SHOWN = ['env', 'format', 'rows', 'perPage'];

function describeDifference(saved: Identity, now: Identity): string {
  const keys = [...new Set([...Object.keys(saved), ...Object.keys(now)])];
  const differ = keys.filter((k) => JSON.stringify(saved[k]) !== JSON.stringify(now[k]));
  const shown = (k: string, v: unknown) => (SHOWN.includes(k) && v !== undefined ? String(v) : undefined);
  const parts = differ.map((k) => {
    const there = shown(k, saved[k]);
    const name = OPTION_NAMES[k] ?? k;
    return there === undefined ? name : `${name} (${there} there, ${shown(k, now[k]) ?? 'none'} here)`;
  });
  return `${parts.join(', ')} ${differ.length === 1 ? 'differs' : 'differ'}`;
}

interface CheckpointOptions {
  target: string;
  name: string;
  identity: Identity;
  resume: boolean;
  /** --resume-or-start: continue a matching, unexpired checkpoint, else start afresh (and keep one). */
  resumeOrStart?: boolean;
  keep: boolean;
  look?: boolean;
  now: () => Date;
  note: (text: string) => void;
  env?: NodeJS.ProcessEnv;
}

/** The checkpoint of one export: checked before any request, saved on failure, removed on success. */
export class Checkpoint {
  readonly dir: string;
  private readonly marks: PageMark[] = [];
  private resumed: State | undefined;
  private staging: { path: string; fd: number; base: string; unregister: () => void } | undefined;
  private readonly started: string;
  private blockedBy: string | undefined;
  savedParams: Record<string, string> | undefined;

  private constructor(private readonly opts: CheckpointOptions) {
    this.dir = join(dirname(opts.target), hiddenName(basename(opts.target), '.checkpoint'));
    this.started = opts.now().toISOString();
  }

  static open(opts: CheckpointOptions): Checkpoint {
    const cp = new Checkpoint(opts);
    const found = inspect(cp.dir);
    let said = false;
    if (opts.resume) cp.resumed = cp.resumable(found);
    else if (opts.resumeOrStart && found && !('problem' in found)) {
      try {
        cp.resumed = cp.resumable(found);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        // Not one to continue (expired ones are removed already; another export's goes below): start afresh.
        const stays = existsSync(cp.dir) && !opts.look;
        opts.note(
          `${err.message.replace(/^--resume: /, '--resume-or-start: ')}; starting afresh${stays ? ', which removes it' : ''}.`,
        );
        said = true;
      }
    }
    if (!cp.resumed && !opts.resume) {
      if (found && 'problem' in found) {
        // Left alone, so no checkpoint is kept: this export never takes its place.
        cp.blockedBy = found.problem;
        opts.note(
          `warning: ${cp.dir} is in the way of a checkpoint: ${found.problem}${opts.keep ? '; this export keeps no checkpoint if it stops' : ''}.`,
        );
      } else if (found && !opts.look && removeCheckpoint(cp.dir) && !said)
        opts.note(
          `Removed the checkpoint of an earlier export to ${opts.name} (${plural(found.state.pages, 'page')}, saved ${ago(opts.now().getTime() - Date.parse(found.state.saved))}); --resume would have continued it.`,
        );
    }
    if ((opts.keep || cp.resumed) && cp.blockedBy === undefined && !opts.look) cp.reserve();
    return cp;
  }

  /** The state `--resume` continues from, or the usage error that says why it cannot. */
  private resumable(found: Found): State {
    const { opts } = this;
    const again = 'Run the export without --resume.';
    if (found === undefined)
      throw new UsageError(`--resume: there is no checkpoint of an export to ${opts.name}`, again);
    if ('problem' in found)
      throw new UsageError(
        `--resume: the checkpoint of ${opts.name} (${this.dir}) cannot be used: ${found.problem}`,
      );
    const { state } = found;
    const age = opts.now().getTime() - Date.parse(state.saved);
    // Saved in the future, its age cannot be known: refused like an expired one.
    if (age < -FUTURE_SLACK_MS || age > MAX_AGE_MS) {
      if (!opts.look) removeCheckpoint(this.dir);
      throw new UsageError(
        age < 0
          ? `--resume: the checkpoint of ${opts.name} says it was saved in the future (${state.saved}; was the clock changed?), so its age is not known; ${opts.look ? '--resume would remove it' : 'it was removed'}`
          : `--resume: the checkpoint of ${opts.name} expired (saved ${ago(age)}; checkpoints are kept 24 hours)${opts.look ? '; --resume would remove it' : ' and was removed'}`,
        again,
      );
    }
    const given = opts.identity.params;
    // Only a strict --resume takes the saved --param values; --resume-or-start runs the same command each time.
    if (
      !opts.resumeOrStart &&
      given &&
      typeof given === 'object' &&
      Object.keys(given).length === 0 &&
      state.identity.params
    ) {
      opts.identity.params = state.identity.params;
      this.savedParams = state.identity.params as Record<string, string>;
    }
    if (JSON.stringify(state.identity) !== JSON.stringify(opts.identity))
      throw new UsageError(
        `--resume: the checkpoint of ${opts.name} is of another export: ${describeDifference(state.identity, opts.identity)}`,
        'Give the same options as the export that saved it, or run without --resume to start over (which removes it).',
      );
    return state;
  }

  /** For `--dry-run --resume`: the saved bytes checked, and the seam check as reasons (empty: it lines up). */
  async survey(): Promise<{
    page: number;
    pages: number;
    referrals: number;
    saved: string;
    seam: (items: unknown[], meta: PageMeta | undefined) => string[];
  }> {
    const state = this.resumed;
    const point = this.resumePoint;
    if (!state || !point) throw new Error('survey() is for a checkpoint opened with resume');
    for await (const _ of point.prefix()) {
    }
    return {
      page: point.page,
      pages: state.pages,
      referrals: state.summary.referrals,
      saved: state.saved,
      seam: (items, meta) => seamReasons(state, items, meta, point.start.written),
    };
  }

  get blocked(): string | undefined {
    return this.blockedBy;
  }

  get wanted(): boolean {
    return this.opts.keep || this.resumed !== undefined;
  }

  get resumePoint(): ResumePoint | undefined {
    const state = this.resumed;
    if (!state) return undefined;
    // Ids in the saved bytes: the walk drops any that comes again, and the seam check sees them.
    const scanner = new WrittenIdScanner(String(state.identity.format), String(state.identity.rows));
    for (const id of state.lastIds) scanner.add(id);
    const page = state.pages + 1;
    return {
      page,
      summary: { ...state.summary, expected: state.summary.expected ?? undefined },
      wroteRecord: state.wroteRecord,
      lastIds: state.lastIds,
      prefix: () => readChecked(join(this.dir, DATA), state, scanner),
      start: {
        page,
        received: state.summary.referrals + state.summary.duplicates,
        written: scanner.written,
        check: (items, meta) => this.checkSeam(state, items, meta, scanner.written),
      },
    };
  }

  /** The first page after the checkpoint must continue the list it was cut from, or the checkpoint goes. */
  private checkSeam(state: State, items: unknown[], meta: PageMeta | undefined, written: WrittenIds): void {
    const reasons = seamReasons(state, items, meta, written);
    if (reasons.length === 0) return;
    removeCheckpoint(this.dir);
    throw new CliError(
      `cannot continue the export to ${this.opts.name}: the referral list changed since the checkpoint was saved (${reasons.join('; ')})`,
      1,
      'Referrals were added or removed since the checkpoint was saved; the tool cannot tell whether before or after the point where it stopped, so the saved part may no longer line up. The checkpoint was removed; run the export again without --resume.',
    );
  }

  get keeping(): boolean {
    return this.staging !== undefined;
  }

  readonly onPage = (mark: PageMark): void => {
    this.marks.push(mark);
    if (this.marks.length > MARKS_KEPT * 2) this.marks.splice(0, this.marks.length - MARKS_KEPT);
  };

  /** Reserves the staging folder and the state file's blocks while the disk still has room. */
  private reserve(): void {
    const { target } = this.opts;
    const suffix = `.checkpoint-${randomBytes(6).toString('hex')}.tmp`;
    const path = join(dirname(target), hiddenName(basename(target), suffix));
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch {
      return; // no room or no permission: the export runs without a checkpoint
    }
    let fd: number | undefined;
    try {
      fd = openSync(path, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
      const d = fstatSync(fd);
      if (!d.isDirectory() || !isPrivate(d)) throw new Error('replaced');
      const base = existsSync(`/proc/self/fd/${fd}`) ? `/proc/self/fd/${fd}` : path;
      const sfd = openSync(join(base, STATE), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      try {
        writeSync(sfd, Buffer.alloc(STATE_RESERVE, 0x20));
      } finally {
        closeSync(sfd);
      }
      const unregister = onForcedExit(() => this.dropStaging());
      this.staging = { path, fd, base, unregister };
    } catch {
      if (fd !== undefined) closeSync(fd);
      removeFiles(path);
      try {
        rmdirSync(path);
      } catch {}
    }
  }

  private dropStaging(): void {
    const s = this.staging;
    if (!s) return;
    this.staging = undefined;
    s.unregister();
    removeFiles(s.base);
    try {
      const here = statIfAny(s.path);
      if (here?.isDirectory() && sameFile(here, fstatSync(s.fd))) rmdirSync(s.path);
    } catch {}
    closeSync(s.fd);
  }

  finish(): void {
    this.dropStaging();
    if (this.resumed) removeCheckpoint(this.dir);
  }

  /** Keeps what is on disk up to the last complete page as the checkpoint; returns what was kept. */
  async save(file: AtomicFile): Promise<{ pages: number; referrals: number } | undefined> {
    const staging = this.staging;
    const done = this.resumed?.pages ?? 0;
    if (!staging || !this.marks.some((m) => m.page > done)) {
      file.discard();
      this.dropStaging();
      return this.keptAsItWas();
    }
    // The last page wholly on disk: the latest mark within the bytes written.
    let chosen: PageMark | undefined;
    const length = await file.keepAs(join(staging.base, DATA), (size) => {
      chosen = this.marks.findLast((m) => m.bytes <= size);
      return chosen && chosen.page > done && chosen.page > 0 ? chosen.bytes : undefined;
    });
    const m = chosen;
    if (length === undefined || !m) {
      this.dropStaging();
      return this.keptAsItWas();
    }
    try {
      const sha256 = syncedSha256(join(staging.base, DATA));
      writeOver(join(staging.base, STATE), this.stateAt(m, sha256));
      // Takes the place of an older checkpoint of ours; anything else there is left alone.
      if (statIfAny(this.dir) && !removeCheckpoint(this.dir)) {
        this.blockedBy = 'something that is not a checkpoint of yours appeared there, and it is left alone';
        throw new Error('in the way');
      }
      renameSync(staging.path, this.dir);
      if (!sameFile(fstatSync(staging.fd), lstatSync(this.dir)))
        throw new Error('the staging folder was replaced');
      staging.unregister();
      closeSync(staging.fd);
      this.staging = undefined;
      const dir = this.dir;
      if (this.opts.env && !dir.includes('\n'))
        changeRegistry(this.opts.env, true, (dirs) => [...dirs.filter((d) => d !== dir), dir]);
      return { pages: m.page, referrals: m.summary.referrals };
    } catch {
      this.dropStaging();
      return undefined;
    }
  }

  private keptAsItWas(): { pages: number; referrals: number } | undefined {
    const kept = this.resumed && existsSync(join(this.dir, STATE)) ? this.resumed : undefined;
    return kept ? { pages: kept.pages, referrals: kept.summary.referrals } : undefined;
  }

  private stateAt(m: PageMark, sha256: string): State {
    const { referrals, rows, pages, duplicates, expected } = m.summary;
    return {
      version: 1,
      identity: this.opts.identity,
      pages: m.page,
      bytes: m.bytes,
      sha256,
      summary: { referrals, rows, pages, duplicates, expected: expected ?? null },
      wroteRecord: m.wroteRecord,
      lastIds: m.lastIds.slice(-100),
      totalPages: m.totalPages ?? this.resumed?.totalPages ?? null,
      started: this.resumed?.started ?? this.started,
      saved: this.opts.now().toISOString(),
    };
  }
}

function seamReasons(
  state: State,
  items: unknown[],
  meta: PageMeta | undefined,
  written: WrittenIds,
): string[] {
  const again = items.filter((r) => {
    const id = (r as { id?: unknown } | null)?.id;
    return typeof id === 'number' ? written.numeric.has(id) : typeof id === 'string' && written.ids.has(id);
  }).length;
  const count = typeof meta?.total_count === 'number' ? meta.total_count : undefined;
  const pages = typeof meta?.total_pages === 'number' ? meta.total_pages : undefined;
  const { expected, referrals } = state.summary;
  const reasons: string[] = [];
  if (again > 0)
    reasons.push(`page ${state.pages + 1} holds ${again} referral${again === 1 ? '' : 's'} already written`);
  if (count !== undefined && expected !== null && count !== expected)
    reasons.push(`the API now reports ${plural(count, 'referral')}, not ${num(expected)}`);
  else if (pages !== undefined && state.totalPages !== null && pages !== state.totalPages)
    reasons.push(`the API now reports ${plural(pages, 'page')}, not ${num(state.totalPages)}`);
  if (items.length === 0 && expected !== null && referrals < expected)
    reasons.push(`page ${state.pages + 1} is empty`);
  return reasons;
}

/** The bytes of the file at `path` in chunks of one reused buffer, up to `length`. */
function* chunksOf(fd: number, length = Number.POSITIVE_INFINITY): Generator<Buffer> {
  const buf = Buffer.alloc(CHUNK);
  for (let off = 0; off < length; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, length - off), off);
    if (n <= 0) return;
    off += n;
    yield buf.subarray(0, n);
  }
}

function syncedSha256(path: string): string {
  const fd = openSync(path, C.O_RDONLY | C.O_NOFOLLOW);
  const hash = createHash('sha256');
  try {
    for (const chunk of chunksOf(fd)) hash.update(chunk);
    try {
      fsyncSync(fd);
    } catch {}
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Writes the state over its reserved bytes (trailing spaces are still JSON): no new space needed. */
function writeOver(path: string, state: State): void {
  const json = Buffer.from(`${JSON.stringify(state, null, 1)}\n`);
  const out = Buffer.alloc(Math.max(json.length, STATE_RESERVE), 0x20);
  json.copy(out);
  const fd = openSync(path, C.O_WRONLY | C.O_NOFOLLOW);
  try {
    for (let off = 0; off < out.length; ) off += writeSync(fd, out, off, out.length - off, off);
    try {
      fsyncSync(fd);
    } catch {}
  } finally {
    closeSync(fd);
  }
}

/** The referral ids in an export's bytes (the first CSV column, or each JSON record's id), fed in chunks. */
export class WrittenIdScanner {
  readonly written: WrittenIds = { ids: new IdSet(), numeric: new Set() };
  private readonly csv: boolean;
  private readonly key: string;
  private inQuotes = false;
  private column = 0;
  private record = 0;
  private target = -1;
  private header: string[] = [];
  private field: number[] = [];
  private value: string | undefined;
  private line = '';

  constructor(format: string, rows: string) {
    this.csv = format === 'csv';
    this.key = rows === 'referral' ? 'id' : 'referral_id';
  }

  add(id: string | number): void {
    if (typeof id === 'number') this.written.numeric.add(id);
    else {
      this.written.ids.add(id);
      // A numeric id written to CSV comes back as text: known both ways.
      if (/^-?\d+$/.test(id)) this.written.numeric.add(Number(id));
    }
  }

  push(chunk: Buffer): void {
    if (!this.csv) {
      const lines = (this.line + chunk.toString('utf8')).split('\n');
      this.line = lines.pop() ?? '';
      for (const l of lines) this.jsonLine(l);
      return;
    }
    for (const b of chunk) {
      // Quote characters are not kept ("" inside quotes toggles twice): ids and names have none.
      if (b === 0x22) this.inQuotes = !this.inQuotes;
      else if (this.inQuotes) this.keep(b);
      else if (b === 0x2c) {
        this.endField();
        this.column++;
      } else if (b === 0x0a) {
        this.endField();
        this.endRecord();
      } else if (b !== 0x0d) this.keep(b);
    }
  }

  private keep(b: number): void {
    if (this.record === 0 || this.column === this.target) this.field.push(b);
  }

  private endField(): void {
    const text = Buffer.from(this.field).toString('utf8');
    this.field = [];
    if (this.record === 0) this.header.push(text.replace(/^\uFEFF/, ''));
    else if (this.column === this.target) this.value = text;
  }

  private endRecord(): void {
    if (this.record === 0) this.target = this.header.indexOf('referral_id');
    else if (this.value) this.add(this.value);
    this.record++;
    this.column = 0;
    this.value = undefined;
  }

  private jsonLine(text: string): void {
    const t = text.replace(/^\[/, '').replace(/,$/, '');
    if (t === '' || t === ']') return;
    try {
      const id = (JSON.parse(t) as Record<string, unknown> | null)?.[this.key];
      if (typeof id === 'string' || typeof id === 'number') this.add(id);
    } catch {}
  }

  end(): void {
    if (!this.csv && this.line !== '') this.jsonLine(this.line);
    this.line = '';
  }
}

/** The checkpoint's bytes; fails before the last chunk is used if they are not the bytes saved. */
async function* readChecked(path: string, state: State, scanner: WrittenIdScanner): AsyncGenerator<Buffer> {
  const fd = openSync(path, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size !== state.bytes) throw damaged();
    const hash = createHash('sha256');
    let pending: Buffer | undefined;
    for (const read of chunksOf(fd, state.bytes)) {
      const chunk = Buffer.from(read);
      hash.update(chunk);
      scanner.push(chunk);
      if (pending) yield pending;
      pending = chunk;
    }
    // A short read leaves the hash different too.
    if (hash.digest('hex') !== state.sha256) throw damaged();
    scanner.end();
    if (pending) yield pending;
  } finally {
    closeSync(fd);
  }
}

const damaged = () =>
  new CliError(
    "cannot continue the export: the checkpoint's data is not what was saved (changed since?)",
    1,
    'Run the export again without --resume (which removes the checkpoint).',
  );
