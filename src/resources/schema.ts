import type { Column } from '../output/write.js';

/** A resource's one schema: its documented fields (the spec's table, in its order) and its table columns. */

/** The named keys of T (not an index signature's). */
type Known<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: 0 } &
  string;

/** Every documented field of T, in the spec's order: `true` for a leaf (a list is one). */
type FieldTree<T> = {
  readonly [K in Known<T>]-?: NonNullable<T[K]> extends readonly unknown[]
    ? true
    : NonNullable<T[K]> extends object
      ? FieldTree<NonNullable<T[K]>>
      : true;
};

type Layout<T> = Omit<Column<T>, 'get'>;

/** A column showing one field (so checked to be text), through `show` when given. */
type FieldColumn<T> = {
  [K in Known<T>]: Layout<T> & { field: K; show?: (value: T[K]) => unknown };
}[Known<T>];

/** A column made from the record; `reads`: the fields it shows as text (checked as a field column's). */
type MadeColumn<T> = Layout<T> & { get: (record: T) => unknown; reads?: readonly Known<T>[] };

type ColumnSpec<T> = FieldColumn<T> | MadeColumn<T>;

export interface Resource<T> {
  /** The documented fields as dotted paths, in the spec's order. */
  readonly fields: readonly string[];
  readonly columns: Column<T>[];
  /** The fields a table shows as they are, in column order: checked to be text before it is drawn. */
  readonly text: readonly string[];
}

const pathsOf = (tree: object, prefix = ''): string[] =>
  Object.entries(tree).flatMap(([k, v]) => (v === true ? [prefix + k] : pathsOf(v, `${prefix}${k}.`)));

export function defineResource<T>(fields: FieldTree<T>, columns: readonly ColumnSpec<T>[]): Resource<T> {
  const text = new Set<string>();
  const made = columns.map((spec): Column<T> => {
    if ('field' in spec) {
      const { field, show, ...layout } = spec;
      text.add(field);
      const read = (r: T) => r[field as keyof T];
      return { ...layout, get: show ? (r) => (show as (v: unknown) => unknown)(read(r)) : read };
    }
    const { reads, ...column } = spec;
    for (const f of reads ?? []) text.add(f);
    return column;
  });
  return { fields: pathsOf(fields), columns: made, text: [...text] };
}

/** A column of the export's flat rows; `repeated`: also on each row of the level below (visit, procedure). */
export type RowColumn<S> = readonly [
  name: string,
  get: (source: S, index: number | null) => Cell,
  repeated?: true,
];
/** A list cell (`cpt_codes`) is an array: JSON keeps it, CSV joins it with `; `. */
export type Cell = string | number | boolean | null | string[];
export const REPEATED = true;

export const rowNames = (columns: readonly RowColumn<never>[], repeatedOnly = false): string[] =>
  columns.filter((c) => !repeatedOnly || c[2]).map((c) => c[0]);

// A nested value where a column wants text is kept as its JSON, not "[object Object]".
export const str = (v: unknown): string | null =>
  v === undefined || v === null
    ? null
    : typeof v === 'string'
      ? v
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);
export const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
export const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
