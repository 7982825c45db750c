import { UsageError } from '../errors.js';

// The referrals a `--from FILE` names: an export's CSV (its referral_id or reference column), NDJSON or
// JSON (each record's id, or referral_id, or reference), or plain text with one ID or reference a line.
// Each named once, in the file's order.

const ID_KEYS = ['referral_id', 'id', 'reference'] as const;

/** The longest ID or reference a list may hold: a longer line is not a list of referrals. */
const MAX_ENTRY = 200;

/** The IDs or references in `text`, first appearance kept; `what` names the file in messages. */
export function referralsInFile(text: string, what: string): string[] {
  const body = text.replace(/^\uFEFF/, '');
  const trimmed = body.trim();
  if (trimmed === '') throw new UsageError(`${what} names no referral (it is empty)`);
  if (body.includes('\0')) throw new UsageError(`${what} is not a list of referrals (it holds a NUL byte)`);
  let found: string[];
  if (trimmed.startsWith('[') || (trimmed.startsWith('{') && !isNdjson(trimmed)))
    found = fromJson(trimmed, what);
  else if (trimmed.startsWith('{')) found = fromNdjson(trimmed, what);
  else {
    const header = firstRecord(body);
    const col = header ? header.indexOf('referral_id') : -1;
    const refCol = header ? header.indexOf('reference') : -1;
    if (header && (col >= 0 || refCol >= 0)) found = fromCsv(body, col >= 0 ? col : refCol);
    else
      found = body
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'));
  }
  const unique = [...new Set(found.map((x) => x.trim()).filter((x) => x !== ''))];
  if (unique.length === 0) throw new UsageError(`${what} names no referral`);
  if (unique.some((x) => x.length > MAX_ENTRY))
    throw new UsageError(
      `${what} is not a list of referrals (an entry is over ${MAX_ENTRY} characters)`,
      'Give one ID or reference a line, or an export (CSV, NDJSON, JSON).',
    );
  return unique;
}

const isNdjson = (text: string) => /\}\s*\r?\n\s*\{/.test(text);

function idOf(record: unknown, where: string): string {
  if (typeof record === 'string') return record;
  if (typeof record === 'object' && record !== null)
    for (const k of ID_KEYS) {
      const v = (record as Record<string, unknown>)[k];
      if (typeof v === 'string' && v.trim() !== '') return v;
    }
  throw new UsageError(`${where} has no referral_id, id or reference`);
}

function fromJson(text: string, what: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${what} is not JSON (it starts with "${text[0]}")`);
  }
  const list = Array.isArray(value)
    ? value
    : Array.isArray((value as { referrals?: unknown }).referrals)
      ? (value as { referrals: unknown[] }).referrals
      : [value];
  return list.map((r, i) => idOf(r, `${what}, record ${i + 1}`));
}

function fromNdjson(text: string, what: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line, i) => [line.trim(), i + 1] as const)
    .filter(([line]) => line !== '')
    .map(([line, n]) => {
      try {
        return idOf(JSON.parse(line), `${what}, line ${n}`);
      } catch (err) {
        if (err instanceof UsageError) throw err;
        throw new UsageError(`${what}, line ${n} is not JSON`);
      }
    });
}

function firstRecord(text: string): string[] | undefined {
  const first = csvRecords(text).next();
  return first.done ? undefined : first.value.map((h) => h.trim().toLowerCase());
}

function fromCsv(text: string, column: number): string[] {
  const out: string[] = [];
  let header = true;
  for (const record of csvRecords(text)) {
    if (header) {
      header = false;
      continue;
    }
    const v = record[column];
    if (v !== undefined && v.trim() !== '') out.push(v);
  }
  return out;
}

/** RFC 4180 records: quoted fields may hold commas, quotes ("") and line breaks. */
function* csvRecords(text: string): Generator<string[]> {
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      if (record.some((f) => f !== '')) yield record;
      record = [];
      field = '';
    } else field += ch;
  }
  record.push(field);
  if (record.some((f) => f !== '')) yield record;
}
