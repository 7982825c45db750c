import { count } from '../util/plural.js';

/**
 * Parses a captured raw HTTP request (`nc -l`, a "follow stream", a proxy's dump): LF or CRLF
 * headers, then the body as the exact bytes (cut to Content-Length, chunked decoded), never re-encoded.
 */

interface CapturedRequest {
  method: string | undefined;
  target: string | undefined;
  headers: Array<[string, string]>;
  body: Buffer;
  notes: string[];
  lineEnding: 'CRLF' | 'LF' | 'mixed' | 'none';
}

export class CaptureError extends Error {}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/\d(\.\d)?$/;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;

export function parseCapture(raw: Buffer): CapturedRequest {
  const notes: string[] = [];
  const { lines, headEnd, lineEnding } = splitHead(raw);
  if (lineEnding !== 'CRLF')
    notes.push(
      `header lines end in ${lineEnding === 'mixed' ? 'a mix of CRLF and LF' : 'LF, not CRLF'} (as when a capture is saved or pasted through an editor)`,
    );
  let method: string | undefined;
  let target: string | undefined;
  const first = lines[0] ?? '';
  const m = REQUEST_LINE.exec(first);
  let headerLines = lines;
  if (m) {
    method = m[1];
    target = m[2];
    headerLines = lines.slice(1);
  } else if (!HEADER_LINE.test(first)) {
    throw new CaptureError(`the first line is neither a request line nor a header: "${first.slice(0, 80)}"`);
  }
  const headers = parseHeaders(headerLines);
  const body = bodyOf(raw.subarray(headEnd), headers, notes);
  return { method, target, headers, body: Buffer.from(body), notes, lineEnding };
}

function splitHead(raw: Buffer): {
  lines: string[];
  headEnd: number;
  lineEnding: CapturedRequest['lineEnding'];
} {
  let pos = 0;
  const lines: string[] = [];
  const endings = new Set<string>();
  let headEnd = -1;
  while (pos < raw.length) {
    const nl = raw.indexOf(0x0a, pos);
    if (nl < 0) break;
    const hasCr = nl > pos && raw[nl - 1] === 0x0d;
    endings.add(hasCr ? 'CRLF' : 'LF');
    const line = raw.subarray(pos, hasCr ? nl - 1 : nl).toString('latin1');
    pos = nl + 1;
    if (line === '') {
      if (lines.length === 0) continue; // blank lines before the request line are tolerated
      headEnd = pos;
      break;
    }
    lines.push(line);
  }
  if (headEnd < 0) {
    if (lines.length === 0) throw new CaptureError('the capture is empty or has no header lines');
    throw new CaptureError('the capture has no blank line after the headers, so the body cannot be found');
  }
  const lineEnding =
    endings.size === 2 ? 'mixed' : endings.has('CRLF') ? 'CRLF' : endings.has('LF') ? 'LF' : 'none';
  return { lines, headEnd, lineEnding };
}

function parseHeaders(headerLines: string[]): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  for (const line of headerLines) {
    if (/^[ \t]/.test(line) && headers.length > 0) {
      // obsolete line folding: continue the previous header
      const last = headers[headers.length - 1]!;
      last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const h = HEADER_LINE.exec(line);
    if (!h) throw new CaptureError(`not a header line: "${line.slice(0, 80)}"`);
    headers.push([h[1]!, decodeLatin1AsUtf8(h[2]!)]);
  }
  return headers;
}

function bodyOf(rest: Buffer, headers: Array<[string, string]>, notes: string[]): Buffer {
  if (headerOf(headers, 'transfer-encoding')?.toLowerCase().includes('chunked')) {
    notes.push('chunked transfer encoding decoded');
    return decodeChunked(rest);
  }
  // Several Content-Length headers (or a list in one) must agree, else the body's end is
  // ambiguous (the request-smuggling case): refused, not the first one picked.
  const lengths =
    headerOf(headers, 'content-length')
      ?.split(',')
      .map((v) => v.trim()) ?? [];
  if (new Set(lengths).size > 1)
    throw new CaptureError(
      `Content-Length is ambiguous: the capture gives ${lengths.map((v) => `"${v.slice(0, 20)}"`).join(' and ')}, so where the body ends cannot be told`,
    );
  if (lengths.length === 0) return rest;
  const n = Number(lengths[0]);
  if (!/^\d+$/.test(lengths[0]!) || !Number.isSafeInteger(n))
    throw new CaptureError(`Content-Length is not a number: "${lengths[0]}"`);
  if (rest.length < n)
    notes.push(
      `the body is ${count(rest.length, 'byte')}, shorter than its Content-Length ${n}: the capture was cut short`,
    );
  else if (rest.length > n) {
    if (!/^[\r\n]*$/.test(rest.subarray(n).toString('latin1')))
      notes.push(
        `${count(rest.length - n, 'byte')} after the body (beyond Content-Length) ${rest.length - n === 1 ? 'was' : 'were'} ignored`,
      );
    return rest.subarray(0, n);
  }
  return rest;
}

/** Decodes `size[;ext] CRLF data CRLF … 0 CRLF [trailers] CRLF` (LF alone tolerated). */
export function decodeChunked(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const nl = data.indexOf(0x0a, pos);
    if (nl < 0) throw new CaptureError('chunked body cut short (no chunk size line)');
    const sizeLine = data.subarray(pos, nl).toString('latin1').replace(/\r$/, '');
    const sizeText = sizeLine.split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) throw new CaptureError(`bad chunk size "${sizeLine.slice(0, 20)}"`);
    const size = Number.parseInt(sizeText, 16);
    pos = nl + 1;
    if (size === 0) break;
    if (pos + size > data.length)
      throw new CaptureError('chunked body cut short (a chunk is shorter than its size)');
    parts.push(data.subarray(pos, pos + size));
    pos += size;
    if (data[pos] === 0x0d) pos++;
    if (data[pos] === 0x0a) pos++;
  }
  return Buffer.concat(parts);
}

function decodeLatin1AsUtf8(v: string): string {
  return /[\u0080-\u00ff]/.test(v) ? Buffer.from(v, 'latin1').toString('utf8') : v;
}

export function headerOf(headers: Array<[string, string]>, name: string): string | undefined {
  const vals = headers.filter(([k]) => k.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
  return vals.length > 0 ? vals.join(', ') : undefined;
}
