import type { Socket } from 'node:net';

/**
 * `imaging mock --hostile`: every string of every answer gets HOSTILE appended, meta holds strings
 * where numbers belong, and headers and the reason phrase carry C1, bidi and format characters.
 * Written as raw bytes: Node's own server refuses control characters in headers.
 */

export const HOSTILE = [
  '\u001b[31mred\u001b[0m', // SGR colour (ESC [)
  '\u001b]52;c;cHduZWQ=\u0007', // OSC 52: write the clipboard
  '\u001b]0;pwned title\u0007', // OSC 0: window title
  '\u001b[2J\u001b[H', // CSI 2J: clear the screen
  '\u009b31m', // C1 CSI
  '\u202eevil\u202c', // bidi override
  '\u200bzero\u200dwidth\ufeff', // zero-width and BOM (format characters)
  '\r\nerror: forged line\n', // CR, LF
  '\u0007\u007f\u0000\u0008', // BEL, DEL, NUL, BS
  '\u2028\u2066iso\u2069', // line separator, bidi isolate
].join('');

/** UTF-8 bytes of U+202E, U+200B and U+FEFF, as the latin1 characters a header is made of. */
const BIDI_BYTES = Buffer.from('\u202e\u200b\ufeff', 'utf8').toString('latin1');

/** A header value Node's client accepts that still carries C1 controls and bidi/format bytes. */
function hostileHeader(value: string): string {
  return `${value}\u009b31m\u0085${BIDI_BYTES}`;
}

/** The reason phrase: Node's client passes ESC, BEL and C1 through to statusMessage. */
const HOSTILE_REASON = `OK \u001b[2J\u001b]0;pwned\u0007\u001b]52;c;cHduZWQ=\u0007\u009b31m${BIDI_BYTES}`;

const META_STRINGS = new Set(['current_page', 'next_page', 'prev_page', 'total_count']);

function hostileBody(value: unknown, key?: string): unknown {
  if (typeof value === 'string') return value + HOSTILE;
  if (Array.isArray(value)) return value.map((v) => hostileBody(v));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (key === 'meta' && META_STRINGS.has(k)) out[k] = `${v ?? 2}${HOSTILE}`;
      else if (key === 'meta' && k === 'total_pages') out[k] = Math.max(2, Number(v) || 0);
      else out[k] = hostileBody(v, k);
    }
    return out;
  }
  return value;
}

function writeRawAnswer(socket: Socket, status: number, headers: Record<string, string>, body: Buffer): void {
  const lines = [`HTTP/1.1 ${status} ${HOSTILE_REASON}`];
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === 'content-length' || k.toLowerCase() === 'connection') continue;
    lines.push(`${k}: ${k.toLowerCase() === 'x-request-id' ? hostileHeader(v) : v}`);
  }
  lines.push(`x-hostile-note: ${hostileHeader('note')}`);
  lines.push(`content-length: ${body.length}`, 'connection: close', '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]));
}

/** The answer made hostile, as raw bytes; HTML pages and a truncated body go as they are. */
export function writeHostile(
  socket: Socket,
  reply: { status: number; body?: unknown; raw?: string | Buffer },
  headers: Record<string, string>,
): void {
  let json = reply.raw !== undefined && /json/.test(headers['content-type'] ?? '');
  let body = reply.body;
  try {
    if (json) body = JSON.parse(String(reply.raw));
  } catch {
    json = false; // a truncated-body fault: sent as it is
  }
  const bytes =
    reply.raw !== undefined && !json
      ? Buffer.from(reply.raw)
      : body === undefined
        ? Buffer.alloc(0)
        : Buffer.from(JSON.stringify(hostileBody(body)));
  if (body !== undefined) headers['content-type'] ??= 'application/json; charset=utf-8';
  writeRawAnswer(socket, reply.status, headers, bytes);
}
