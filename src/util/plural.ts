/** `1 item`, `2 items`: a count with its noun in the right number. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
