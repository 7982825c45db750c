/** The longest file name (one path component) in bytes, on every file system imaging writes to. */
export const NAME_MAX = 255;

/** Bytes of a short prefix of the target's name kept in a shortened hidden name, for a person to recognise. */
const PREFIX_BYTES = 40;

/**
 * The name of a hidden file or folder kept beside `name` (a temporary `.NAME.….partial`, a
 * checkpoint `.NAME.checkpoint`): `.` + `name` + `suffix`, or, when that is longer than a file
 * name may be (a target of 234-255 bytes), `.` + a short prefix of `name` + `~` + a hash of the
 * whole name + `suffix`. Deterministic (a resumed export finds its checkpoint by it), always
 * hidden, and always ending in `suffix`, so it never looks like the finished file.
 */
export function hiddenName(name: string, suffix: string): string {
  const full = `.${name}${suffix}`;
  if (Buffer.byteLength(full) <= NAME_MAX) return full;
  const hash = process
    .getBuiltinModule('node:crypto')
    .createHash('sha256')
    .update(name)
    .digest('hex')
    .slice(0, 16);
  return `.${prefixBytes(name, PREFIX_BYTES)}~${hash}${suffix}`;
}

/** The longest prefix of `text` of at most `max` UTF-8 bytes that ends between two characters. */
function prefixBytes(text: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return out;
}
