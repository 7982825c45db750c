/**
 * CRC-32 (ISO-HDLC: the one of zlib, gzip and PNG) of some bytes: the same number as Node's
 * `zlib.crc32(bytes)`, so the reference cache's entries written before still check.
 *
 * The reference cache checks each entry's body with it. `node:zlib` was loaded for it at every
 * start of every command, ~1 ms on Node 24 (it loads zlib's whole stream layer); the bodies are a
 * few kilobytes, which a table-driven loop covers in well under a millisecond.
 */
let table: Uint32Array | undefined;

function makeTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

export function crc32(bytes: Uint8Array): number {
  const t = (table ??= makeTable());
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
