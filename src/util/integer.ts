/**
 * Whether `text` is a decimal integer that a JSON number (a double) cannot hold exactly:
 * 12345678901234567890 would go out as 12345678901234567000, so it is kept as its digits instead.
 */
export function inexactInteger(text: string): boolean {
  if (!/^-?\d+$/.test(text)) return false;
  const n = Number(text);
  return !Number.isFinite(n) || BigInt(text) !== BigInt(n);
}
