/**
 * A page's output, given as the pieces it was built from (rows, records), as one UTF-8 buffer.
 * Joining the pieces into one string first (`chunk += row`) makes V8 flatten a ~350-700 KB
 * string (two bytes a character as soon as one name is outside Latin-1) on its large-object space
 * for every page, only to encode it again; each piece here is a small flat string, encoded once
 * into its place.
 */
export function utf8Of(pieces: readonly string[]): Buffer {
  let total = 0;
  for (const p of pieces) total += Buffer.byteLength(p);
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const p of pieces) at += out.write(p, at);
  return out;
}
