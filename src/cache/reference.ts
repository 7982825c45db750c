import { closeSync, lstatSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { AnswerCache, ApiResponse } from '../api/client.js';
import { redactToken } from '../api/trace.js';
import { headerValue } from '../api/transport.js';
import { readNoFollow } from '../fs/write-file.js';
import { privateFolder } from './folder.js';

const sha256Hex = (text: string) =>
  process.getBuiltinModule('node:crypto').createHash('sha256').update(text).digest('hex');
const crc32 = (bytes: Uint8Array) => process.getBuiltinModule('node:zlib').crc32(bytes);

// Reference answers kept on disk (allow-listed paths only), so a lookup made again costs nothing. An
// entry counts only as a 0600 regular file of ours whose header names this URL and token hash and
// whose body has the recorded length and CRC; anything else is a miss, and no error fails a command.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const CACHED_PATHS: Readonly<Record<string, number>> = {
  '/modalities': DAY,
  '/body_parts': DAY,
  '/cpt_codes': DAY,
  '/icd10_codes': HOUR,
};

/** Entries older than the longest limit (plus a margin) are deleted when a new one is written. */
const SWEEP_AFTER = DAY + HOUR;
/** The names this cache makes: only these are swept or cleared; anything else there is left alone. */
const ENTRY_NAME = /^[0-9a-f]{64}\.json$/;
const TEMP_NAME = /^\.tmp-\d+-[0-9a-z]*$/;
function ownFiles(dir: string): Array<{ path: string; temp: boolean; mtimeMs: number }> {
  const own = [];
  for (const name of readdirSync(dir)) {
    const temp = TEMP_NAME.test(name);
    if (!temp && !ENTRY_NAME.test(name)) continue;
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (st.isFile() || st.isSymbolicLink()) own.push({ path, temp, mtimeMs: st.mtimeMs });
    } catch {}
  }
  return own;
}
/** Larger answers are not kept. */
const MAX_ENTRY_BYTES = 8 * 1024 * 1024;
/** A clock that went back this far makes an entry "from the future": not used. */
const SKEW = 5 * MINUTE;

type CacheMode = 'use' | 'refresh';

interface CachedAnswer {
  bytes: Buffer;
  headers: IncomingHttpHeaders;
  ageMs: number;
}

interface CacheOptions {
  env: NodeJS.ProcessEnv;
  /** Only its hash (with the origin) is ever written. */
  token: string;
  mode: CacheMode;
  now?: () => number;
  trace?: ((line: string) => void) | undefined;
}

interface Header {
  v: 1;
  url: string;
  token: string;
  stored: number;
  type?: string | undefined;
  rid?: string | undefined;
  size: number;
  crc: number;
}

export function cacheable(apiPath: string): boolean {
  return Object.hasOwn(CACHED_PATHS, apiPath);
}

export class ReferenceCache implements AnswerCache {
  private dir: string | undefined | null = null;
  private readonly staged: Array<{
    url: string;
    bytes: Buffer;
    type: string | undefined;
    rid: string | undefined;
  }> = [];
  private readonly now: () => number;

  constructor(private readonly opts: CacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  private folder(): string | undefined {
    if (this.dir === null) {
      const f = privateFolder(this.opts.env);
      this.dir = 'dir' in f ? f.dir : undefined;
      if (!('dir' in f)) this.opts.trace?.(`* cache not used: ${f.problem}`);
    }
    return this.dir;
  }

  private tokenHash(url: string): string {
    return sha256Hex(`imaging reference cache\0${new URL(url).origin}\0${this.opts.token}`);
  }

  private fileOf(dir: string, url: string, token: string): string {
    return join(dir, `${sha256Hex(`${token}\0${url}`)}.json`);
  }

  lookup(apiPath: string, url: string): CachedAnswer | undefined {
    if (this.opts.mode !== 'use' || !cacheable(apiPath)) return undefined;
    try {
      const dir = this.folder();
      if (!dir) return undefined;
      const token = this.tokenHash(url);
      const entry = readEntry(this.fileOf(dir, url, token));
      if (!entry) return undefined;
      const { header, body } = entry;
      if (header.url !== url || header.token !== token) return undefined;
      const ageMs = this.now() - header.stored;
      const limit = CACHED_PATHS[apiPath] as number;
      if (ageMs < -SKEW || ageMs >= limit) return undefined;
      const headers: IncomingHttpHeaders = {};
      if (header.type !== undefined) headers['content-type'] = header.type;
      if (header.rid !== undefined) headers['x-request-id'] = header.rid;
      return { bytes: body, headers, ageMs: Math.max(0, ageMs) };
    } catch {
      return undefined;
    }
  }

  /** Kept until `commit()`, once the command has succeeded. */
  stage(apiPath: string, url: string, res: ApiResponse<unknown>): void {
    if (res.status !== 200 || !cacheable(apiPath)) return;
    const bytes = res.raw;
    if (bytes.length > MAX_ENTRY_BYTES) return;
    const type = headerValue(res.headers, 'content-type');
    // An answer that echoes the token is never written to disk: in its body (JSON escapes read as the
    // characters they stand for) or in the headers kept with it.
    const text = bytes.toString('utf8');
    let decoded = text;
    try {
      decoded = JSON.stringify(JSON.parse(text));
    } catch {}
    const echoes = (t: string | undefined) => t !== undefined && redactToken(t, this.opts.token) !== t;
    if ([text, decoded, type, res.requestId].some(echoes)) return;
    this.staged.push({ url, bytes, type, rid: res.requestId });
  }

  /** Writes the staged answers, only after the command exited 0: an answer it refused is never kept. */
  commit(): void {
    if (this.staged.length === 0) return;
    try {
      const dir = this.folder();
      if (!dir) return;
      for (const { url, type, rid, bytes } of this.staged.splice(0)) {
        const token = this.tokenHash(url);
        // JSON leaves out a type or request id that is undefined.
        const header: Header = {
          v: 1,
          url,
          token,
          stored: this.now(),
          type,
          rid,
          size: bytes.length,
          crc: crc32(bytes),
        };
        writeEntry(dir, this.fileOf(dir, url, token), header, bytes);
      }
      sweep(dir, Date.now());
    } catch {}
  }
}

function readEntry(file: string): { header: Header; body: Buffer } | undefined {
  try {
    const buf = readNoFollow(file, (st) => {
      const uid = (process.getuid as () => number)();
      if (!st.isFile() || st.uid !== uid || (st.mode & 0o7777) !== 0o600 || st.size > MAX_ENTRY_BYTES + 4096)
        throw new Error('not an entry of ours');
    });
    const nl = buf.indexOf(0x0a);
    if (nl < 0) return undefined;
    const header = JSON.parse(buf.subarray(0, nl).toString('utf8')) as Partial<Header>;
    const body = buf.subarray(nl + 1);
    if (
      header === null ||
      typeof header !== 'object' ||
      header.v !== 1 ||
      typeof header.url !== 'string' ||
      typeof header.token !== 'string' ||
      typeof header.stored !== 'number' ||
      !Number.isFinite(header.stored) ||
      header.size !== body.length ||
      header.crc !== crc32(body) ||
      (header.type !== undefined && typeof header.type !== 'string') ||
      (header.rid !== undefined && typeof header.rid !== 'string')
    )
      return undefined;
    return { header: header as Header, body };
  } catch {
    return undefined;
  }
}

function writeEntry(dir: string, file: string, header: Header, body: Buffer): void {
  const tmp = join(dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  let fd: number | undefined = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(header)}\n`);
    writeSync(fd, body);
    closeSync(fd);
    fd = undefined;
    // Replaces whatever was at the name: rename never follows a symlink.
    renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
}

function sweep(dir: string, now: number): void {
  for (const { path, temp, mtimeMs } of ownFiles(dir)) {
    try {
      if (now - mtimeMs > (temp ? HOUR : SWEEP_AFTER)) rmSync(path, { force: true });
    } catch {}
  }
}

/** Removes every entry of the cache folder; anything not named as its own is left alone. */
export function clearCache(env: NodeJS.ProcessEnv): { removed: number; problem?: string } {
  const f = privateFolder(env, false);
  if (!('dir' in f)) return f.missing ? { removed: 0 } : { removed: 0, problem: f.problem };
  const own = ownFiles(f.dir);
  for (const { path } of own) rmSync(path, { force: true });
  return { removed: own.filter((file) => !file.temp).length };
}
