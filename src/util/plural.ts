/** `1 item`, `2 items`, `37,804 items`: a count with its noun in the right number, digits grouped. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** A count in a human message: en-US thousands separators (`37,804`), as the progress line shows. */
export function num(n: number): string {
  return n.toLocaleString('en-US');
}
