import { MAX_ARG_BYTES } from '../cli/args.js';
import { UsageError } from '../errors.js';

/**
 * What `referrals find TEXT` looks for, and whether a list record is one: its reference, a claim
 * number (wc_number, insurance_number), the patient's name ("Garcia", "garcia, mary" as last,
 * first, or "Mary Garcia") or date of birth (YYYY-MM-DD or MM/DD/YYYY). Case, accents and spacing
 * never matter; the text is never assumed to have one shape, so every reading is tried.
 */
export interface ReferralSearch {
  /** The text as typed, trimmed. */
  text: string;
  /** The date of birth the text names, as YYYY-MM-DD; undefined when it is not a date. */
  dob: string | undefined;
  /** The record matches on any of the readings. */
  matches(record: unknown): boolean;
  /** The record's reference is the text (references are unique: a scan stops there). */
  isReference(record: unknown): boolean;
}

/** Letters NFD leaves whole (no combining mark to take off), as a person types them without: Ødegaard, odegaard. */
const UNMARKED: Record<string, string> = {
  '\u00f8': 'o', // ø
  '\u00e6': 'ae', // æ
  '\u00df': 'ss', // ß
  '\u0142': 'l', // ł
  '\u0111': 'd', // đ
  '\u0153': 'oe', // œ
  '\u00f0': 'd', // ð
  '\u00fe': 'th', // þ
  '\u0131': 'i', // ı
};

/** Lower case, accents off, runs of spaces as one: "  Hernández " and "hernandez" compare equal. */
export function fold(value: string): string {
  return value
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\u00f8\u00e6\u00df\u0142\u0111\u0153\u00f0\u00fe\u0131]/g, (c) => UNMARKED[c]!)
    .replace(/\s+/g, ' ')
    .trim();
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;

/** YYYY-MM-DD or MM/DD/YYYY as YYYY-MM-DD; undefined for other text; a usage error for a date that is none. */
export function dateOfBirth(text: string): string | undefined {
  const iso = ISO_DATE.exec(text);
  const us = US_DATE.exec(text);
  if (!iso && !us) return undefined;
  const [y, m, d] = iso
    ? [iso[1]!, iso[2]!, iso[3]!]
    : [us![3]!, us![1]!.padStart(2, '0'), us![2]!.padStart(2, '0')];
  const date = new Date(`${y}-${m}-${d}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== `${y}-${m}-${d}`)
    throw new UsageError(`"${text}" is not a date`, 'Give a date of birth as YYYY-MM-DD or MM/DD/YYYY.');
  return `${y}-${m}-${d}`;
}

/** The usage error for a search text with nothing in it, before any request. */
export function searchText(text: string): string {
  const t = text.trim();
  if (t === '')
    throw new UsageError(
      'the search text is empty',
      'Give a reference, a patient name, a date of birth or a claim number.',
    );
  // Several words joined (find Mary Garcia) may pass the parser's limit for each: the same limit.
  if (Buffer.byteLength(t) > MAX_ARG_BYTES)
    throw new UsageError('the reference or search text is longer than 4 KiB', 'Nothing was sent.');
  return t;
}

const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function recordDob(patient: Record<string, unknown>): string | undefined {
  const iso = str(patient.date_of_birth_iso);
  if (iso && ISO_DATE.test(iso)) return iso;
  const us = str(patient.date_of_birth);
  const m = us ? US_DATE.exec(us.trim()) : null;
  return m ? `${m[3]}-${m[1]!.padStart(2, '0')}-${m[2]!.padStart(2, '0')}` : undefined;
}

/**
 * A name as words: folded, apostrophes dropped (O'Connor, oconnor), other marks (hyphens and commas
 * too: Rodriguez-Lopez, rodriguez lopez) a space; a last name also matches its pieces run together.
 */
function words(value: string): string[] {
  return fold(value)
    .replace(/['\u2019]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .split(' ')
    .filter(Boolean);
}

const SUFFIX = /^(jr|sr|ii|iii|iv)$/;
const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((w, i) => w === b[i]);
const startsWith = (all: readonly string[], part: readonly string[]) =>
  part.length > 0 && part.length <= all.length && part.every((w, i) => w === all[i]);

/**
 * The patient's last name ("Garcia"; "Smith, Jr." or "Smith"), or last and first in either order,
 * with or without a comma ("Smith, Jr., Aisha" as the table shows it); the first name may stop early
 * (Mary for Mary "Molly"). Commas and hyphens count as spaces.
 */
function nameMatches(patient: Record<string, unknown>, text: string): boolean {
  const first = words(str(patient.first_name) ?? '');
  const full = words(str(patient.last_name) ?? '');
  if (full.length === 0) return false;
  const bare = full.length > 1 && SUFFIX.test(full[full.length - 1]!) ? full.slice(0, -1) : full;
  // A last name typed in other pieces is the same name: "O Connor" is O'Connor, "dela cruz" De La Cruz.
  const isLast = (w: readonly string[]) => [full, bare].some((l) => same(w, l) || w.join('') === l.join(''));
  const w = words(text);
  if (isLast(w)) return true;
  for (let k = 1; k < w.length; k++) {
    const [a, b] = [w.slice(0, k), w.slice(k)];
    if ((startsWith(first, a) && isLast(b)) || (isLast(a) && startsWith(first, b))) return true;
  }
  return false;
}

export function referralSearch(typed: string): ReferralSearch {
  const text = searchText(typed);
  let dob: string | undefined;
  try {
    dob = dateOfBirth(text);
  } catch {
    // Not a date after all: still a reference or a claim number (find refuses it before this).
    dob = undefined;
  }
  const wanted = fold(text);
  const isReference = (record: unknown): boolean => {
    const ref = str(obj(record)?.reference);
    return ref !== undefined && fold(ref) === wanted;
  };
  return {
    text,
    dob,
    isReference,
    matches(record) {
      const r = obj(record);
      if (!r) return false;
      if (isReference(r)) return true;
      for (const claim of [r.wc_number, r.insurance_number]) {
        const c = str(claim);
        if (c !== undefined && c.trim() !== '' && fold(c) === wanted) return true;
      }
      const patient = obj(r.patient);
      if (!patient) return false;
      if (dob !== undefined) return recordDob(patient) === dob;
      return nameMatches(patient, text);
    },
  };
}
