import { UsageError } from '../errors.js';
import { nearest } from '../util/suggest.js';

/** Field selection (`--fields a,b,c`, `--json a,b,c`) and the stable CSV columns of lists. */

/** A named set of fields, as a command's help lists it. */
export interface FieldSet {
  /** When a command has several ("--rows visit"); absent for one. */
  readonly label?: string;
  readonly fields: readonly string[];
}

/** What a command prints: the documented fields and, with --fields, the chosen ones. */
export interface FieldChoice {
  readonly documented: readonly string[];
  /** The chosen paths in the order given (without a leading +); undefined: everything. */
  readonly chosen: readonly string[] | undefined;
  /** Fields this tool computes from the record, by name (among `documented`); absent: none. */
  readonly computed?: Readonly<Record<string, (record: unknown) => unknown>> | undefined;
}

interface SelectOptions {
  /** Whether `+name` (a field the documentation does not list) is allowed: not for fixed flat rows. */
  extra?: boolean;
  /** Which set, when a command has several ("--rows visit"). */
  setLabel?: string | undefined;
  /** Fields computed from the record (among `documented`). */
  computed?: Readonly<Record<string, (record: unknown) => unknown>> | undefined;
  /** The output format: JSON and NDJSON are the records as sent, so a computed field is refused there. */
  format?: string | undefined;
}

/** The names of a --fields value, trimmed, in order, each once. */
function parseFieldList(value: string): string[] {
  const names = [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
  if (names.length === 0)
    throw new UsageError('--fields needs at least one field name', 'For example: --fields id,reference');
  return names;
}

/** Every name --fields takes for this set: each documented path and each documented object. */
export function selectableNames(documented: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const path of documented) {
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) names.add(parts.slice(0, i).join('.'));
  }
  return names;
}

/** Checks a --fields value against the documented fields (exit 2 before any request). */
export function selectFields(
  value: string | undefined,
  documented: readonly string[],
  opts: SelectOptions = {},
): FieldChoice {
  const computed = opts.computed;
  if (value === undefined) return { documented, chosen: undefined, computed };
  const names = parseFieldList(value);
  const known = selectableNames(documented);
  const chosen: string[] = [];
  for (const name of names) {
    if (name.startsWith('+') && opts.extra !== false) {
      const path = name.slice(1).trim();
      if (!/^[^.]+(\.[^.]+)*$/.test(path))
        throw new UsageError(
          `--fields: "${name}" is not a field path`,
          'For example: +expires_at or +patient.weight',
        );
      chosen.push(path);
      continue;
    }
    if (known.has(name)) {
      if (computed && Object.hasOwn(computed, name) && (opts.format === 'json' || opts.format === 'ndjson'))
        throw new UsageError(
          `--fields ${name} is computed by this tool, and --format ${opts.format} writes the records as the API sent them`,
          `It is in the table, CSV and workbook: --format csv --fields ${names.join(',')}`,
        );
      chosen.push(name);
      continue;
    }
    const near = nearestName(name, [...known]);
    const where = opts.setLabel ? ` (${opts.setLabel})` : '';
    throw new UsageError(
      `--fields: unknown field "${name}"${where}${near ? `; did you mean ${near}?` : ''}`,
      `Fields: ${documented.join(', ')}.${objectsNote(documented)}${
        opts.extra === false
          ? ''
          : ' A field the API sends that is not listed here: prefix it with + (--fields id,+expires_at).'
      }`,
    );
  }
  return { documented, chosen: [...new Set(chosen)], computed };
}

/** "An object is a field too (patient, law_firm).", for sets that have nested fields. */
function objectsNote(documented: readonly string[]): string {
  const objects = [...new Set(documented.filter((p) => p.includes('.')).map((p) => p.split('.')[0]!))];
  return objects.length > 0 ? ` An object is a field too, whole: ${objects.join(', ')}.` : '';
}

/** Each path's parts, split once: a CSV or workbook of every field reads each path once a record. */
const PARTS = new Map<string, readonly string[]>();

/** The value at a dotted path, through the record's own keys only; undefined when absent. */
export function valueAt(record: unknown, path: string): unknown {
  let parts = PARTS.get(path);
  if (parts === undefined) {
    parts = path.split('.');
    if (PARTS.size < 10_000) PARTS.set(path, parts);
  }
  return valueThrough(record, parts);
}

function valueThrough(record: unknown, parts: readonly string[]): unknown {
  let v: unknown = record;
  for (const part of parts) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    if (!Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** A field's value in a table, CSV or workbook: computed from the record, or at its path. */
export function fieldValue(record: unknown, path: string, choice: FieldChoice | undefined): unknown {
  const computed = choice?.computed;
  return computed && Object.hasOwn(computed, path) ? computed[path]!(record) : valueAt(record, path);
}

/**
 * `fieldValue` for one field, decided once: a writer reads a column's field from every record, and
 * the lookups of which kind of field it is and of its path's parts are then made once a column.
 */
export function fieldReader(path: string, choice: FieldChoice | undefined): (record: unknown) => unknown {
  const computed = choice?.computed;
  if (computed && Object.hasOwn(computed, path)) return computed[path]!;
  const parts = path.split('.');
  return (record) => valueThrough(record, parts);
}

/** The chosen fields of a record, keyed as typed, in the order given; a missing one is null. */
export function pick(record: unknown, chosen: readonly string[]): Record<string, unknown> {
  // No prototype: a field named "__proto__" is a key like any other.
  const out = Object.create(null) as Record<string, unknown>;
  for (const path of chosen) out[path] = valueAt(record, path) ?? null;
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// The documented fields first, in their fixed order (present or not), then the others as dotted paths, sorted.
export function csvColumns(records: readonly unknown[], documented: readonly string[]): string[] {
  const leaves = new Set(documented);
  const objects = new Set<string>();
  for (const path of documented) {
    const parts = path.split('.');
    for (let i = 1; i < parts.length; i++) objects.add(parts.slice(0, i).join('.'));
  }
  const extra = new Map<string, boolean>(); // path -> whether some record holds a non-object value there
  const walk = (value: Record<string, unknown>, prefix: string, known: boolean) => {
    for (const [k, v] of Object.entries(value)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (known && leaves.has(path)) continue;
      if (known && objects.has(path)) {
        if (isObject(v)) walk(v, path, true);
        continue;
      }
      if (isObject(v) && Object.keys(v).length > 0) {
        if (!extra.has(path)) extra.set(path, false);
        walk(v, path, false);
      } else extra.set(path, (extra.get(path) ?? false) || (v !== null && v !== undefined && !isObject(v)));
    }
  };
  for (const r of records) if (isObject(r)) walk(r, '', true);
  const paths = [...extra.keys()];
  const parents = new Set(paths.flatMap((p) => paths.filter((q) => q.startsWith(`${p}.`)).map(() => p)));
  const tail = paths.filter((p) => !(parents.has(p) && !extra.get(p))).sort();
  return [...documented, ...tail];
}

/** The help's list of a command's fields. */
export function fieldsHelp(sets: readonly FieldSet[], width = 80): string {
  const lines = ['', 'Fields (--fields a,b,c or --json a,b,c: those, in that order):'];
  for (const set of sets) {
    const head = set.label ? `  ${set.label}: ` : '  ';
    let line = head;
    const indent = ' '.repeat(set.label ? 4 : 2);
    set.fields.forEach((f, i) => {
      const word = `${f}${i < set.fields.length - 1 ? ',' : ''}`;
      if (line.trim() !== '' && line.length + 1 + word.length > width && line !== head) {
        lines.push(line.trimEnd());
        line = indent;
      }
      line += line === head || line === indent ? word : ` ${word}`;
    });
    lines.push(line.trimEnd());
  }
  return lines.join('\n');
}

/** The closest known name (for a typo), or undefined when nothing is close. */
function nearestName(name: string, known: readonly string[]): string | undefined {
  return nearest(name, known, () => Math.max(2, Math.floor(name.length / 3)));
}
