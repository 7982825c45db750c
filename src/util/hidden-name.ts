export const NAME_MAX = 255;

const PREFIX_BYTES = 40;

/**
 * A hidden name beside `name`: `.` + `name` + `suffix`, or, when too long for a file name, a short
 * prefix and a hash of the whole name. Deterministic, always hidden, always ending in `suffix`.
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
