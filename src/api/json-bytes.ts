/**
 * JSON.parse of a list page's bytes, without ever holding the page as one string (issue 13, item 3).
 *
 * `JSON.parse(body.toString())` makes the whole page one string first: ~350 KB of bytes become a
 * ~700 KB two-byte string as soon as one name on the page is outside Latin-1 (Nguyễn, 김), on
 * V8's large-object space, once per page of every export and `--all` walk. Here only the top two levels (a bare array, or an
 * object and its members, and the elements of its array members) are read byte by byte; every
 * other value, each record, is decoded and parsed on its own slice: small strings that die young.
 *
 * The result is exactly JSON.parse's, and it throws exactly when JSON.parse of the whole text
 * would: the structure between the slices is checked here (only JSON whitespace, `,` and `:` where
 * the grammar has them, and nothing after the value), and each slice is parsed by JSON.parse
 * itself, so it is valid JSON on its own. The slices begin and end on ASCII bytes, so UTF-8
 * decoding (U+FFFD for bad bytes) gives the same characters as decoding the whole text would.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

class NotJson extends SyntaxError {}

/**
 * The body's chunks as one run of bytes, without joining them (a joined copy of every page is one
 * more short-lived large allocation): `at` reads a byte, `text` decodes a range.
 */
class Chunks {
  readonly length: number;
  /** Where each chunk starts. */
  private readonly starts: number[] = [];
  constructor(readonly chunks: readonly Buffer[]) {
    let n = 0;
    for (const c of chunks) {
      this.starts.push(n);
      n += c.length;
    }
    this.length = n;
  }

  /** The chunk that holds byte `pos` (< length). */
  chunkOf(pos: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] as number) <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  start(chunk: number): number {
    return this.starts[chunk] as number;
  }

  /** The byte at `pos`, or -1 past the end. */
  at(pos: number): number {
    if (pos >= this.length) return -1;
    const c = this.chunkOf(pos);
    return (this.chunks[c] as Buffer)[pos - (this.starts[c] as number)] as number;
  }

  /** Bytes [from, to) decoded as UTF-8. */
  text(from: number, to: number): string {
    if (from >= to) return '';
    const c = this.chunkOf(from);
    const chunk = this.chunks[c] as Buffer;
    const base = this.starts[c] as number;
    if (to - base <= chunk.length) return chunk.toString('utf8', from - base, to - base);
    const parts: Buffer[] = [];
    for (let i = c, at = from; at < to; i++) {
      const b = this.chunks[i] as Buffer;
      const s = this.starts[i] as number;
      parts.push(b.subarray(at - s, Math.min(b.length, to - s)));
      at = s + b.length;
    }
    return Buffer.concat(parts, to - from).toString('utf8');
  }
}

/** JSON.parse of the bytes `chunks` hold, end to end (see above). */
export function parseJsonBytes(chunks: readonly Buffer[]): unknown {
  const bytes = new Chunks(chunks);
  let pos = skipSpace(bytes, 0);
  let value: unknown;
  const b = bytes.at(pos);
  if (b === OPEN_BRACKET) [value, pos] = arrayOfSlices(bytes, pos);
  else if (b === OPEN_BRACE) [value, pos] = objectOfSlices(bytes, pos);
  else return JSON.parse(bytes.text(0, bytes.length));
  if (skipSpace(bytes, pos) !== bytes.length) throw new NotJson('unexpected text after the JSON value');
  return value;
}

/**
 * `[ v, v, … ]` from `start` (at the `[`): each element parsed on its own; [array, index after `]`].
 * (Runs of elements parsed together were tried: slower for a list of 200,000 short codes, 185 ms
 * against 145 ms one by one (JSON.parse of the whole: 98 ms), and a larger heap for records.)
 */
function arrayOfSlices(bytes: Chunks, start: number): [unknown[], number] {
  const out: unknown[] = [];
  let pos = skipSpace(bytes, start + 1);
  if (bytes.at(pos) === CLOSE_BRACKET) return [out, pos + 1];
  for (;;) {
    const end = valueEnd(bytes, pos);
    out.push(JSON.parse(bytes.text(pos, end)));
    pos = skipSpace(bytes, end);
    const b = bytes.at(pos);
    if (b === CLOSE_BRACKET) return [out, pos + 1];
    if (b !== COMMA) throw new NotJson('expected , or ] in an array');
    pos = skipSpace(bytes, pos + 1);
  }
}

/** `{ "k": v, … }` from `start`: an array member's elements each parsed on their own, other values whole. */
function objectOfSlices(bytes: Chunks, start: number): [Record<string, unknown>, number] {
  const out: Record<string, unknown> = {};
  let pos = skipSpace(bytes, start + 1);
  if (bytes.at(pos) === CLOSE_BRACE) return [out, pos + 1];
  for (;;) {
    if (bytes.at(pos) !== QUOTE) throw new NotJson('expected a member name');
    const keyEnd = valueEnd(bytes, pos);
    const key = JSON.parse(bytes.text(pos, keyEnd)) as string;
    pos = skipSpace(bytes, keyEnd);
    if (bytes.at(pos) !== COLON) throw new NotJson('expected :');
    pos = skipSpace(bytes, pos + 1);
    let value: unknown;
    if (bytes.at(pos) === OPEN_BRACKET) [value, pos] = arrayOfSlices(bytes, pos);
    else {
      const end = valueEnd(bytes, pos);
      value = JSON.parse(bytes.text(pos, end));
      pos = end;
    }
    // As JSON.parse defines it: an own data property (`__proto__` too), the last one of a name wins.
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
    pos = skipSpace(bytes, pos);
    const b = bytes.at(pos);
    if (b === CLOSE_BRACE) return [out, pos + 1];
    if (b !== COMMA) throw new NotJson('expected , or } in an object');
    pos = skipSpace(bytes, pos + 1);
  }
}

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(bytes: Chunks, pos: number): number {
  while (isSpace(bytes.at(pos))) pos++;
  return pos;
}

/**
 * Where the value starting at `pos` ends: after its closing quote or bracket (strings skipped,
 * escapes honoured), or, for a number or literal, at the next byte that cannot be part of one.
 * Not a check: JSON.parse of the slice is. Throws at the end of the bytes. Runs over each chunk's
 * bytes directly: this loop reads every byte of every record.
 */
function valueEnd(bytes: Chunks, pos: number): number {
  const first = bytes.at(pos);
  if (first === -1) throw new NotJson('unexpected end of the JSON text');
  const scalar = first !== QUOTE && first !== OPEN_BRACE && first !== OPEN_BRACKET;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let c = bytes.chunkOf(pos); c < bytes.chunks.length; c++) {
    const chunk = bytes.chunks[c] as Buffer;
    const base = bytes.start(c);
    const n = chunk.length;
    for (let i = Math.max(0, pos - base); i < n; i++) {
      const b = chunk[i] as number;
      if (scalar) {
        if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || isSpace(b)) {
          // No value at all (`[1,,2]`): said here rather than by JSON.parse('').
          if (base + i === pos) throw new NotJson('expected a value');
          return base + i;
        }
      } else if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) {
          inString = false;
          if (depth === 0) return base + i + 1;
        }
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && --depth === 0) return base + i + 1;
    }
  }
  if (scalar) return bytes.length;
  throw new NotJson('unexpected end of the JSON text');
}
