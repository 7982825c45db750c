import type { Icd10Code, Referral } from '../api/types.js';
import { isUuid } from '../cli/args.js';
import type { Context } from '../context.js';
import { UnreadableAnswerError, UsageError } from '../errors.js';
import { clean } from '../output/text.js';

/**
 * `referrals update`: the body it sends and the changes it shows. The update's body is not published;
 * its fields are the guess, `{ "referral": { … } }` with only the fields given.
 */
export interface UpdateFlags {
  wcNumber?: string | undefined;
  insuranceNumber?: string | undefined;
  icd10?: string[] | undefined;
  lawFirm?: string | undefined;
  practice?: string | undefined;
  provider?: string | undefined;
}

export interface IcdChanges {
  add: string[];
  remove: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `+ID,-ID` (repeatable): each an ICD-10 id (UUID) or code, with its sign; a usage error otherwise. */
export function parseIcdChanges(values: readonly string[]): IcdChanges {
  const out: IcdChanges = { add: [], remove: [] };
  for (const part of values.flatMap((v) => v.split(','))) {
    const t = part.trim();
    if (t === '') continue;
    const sign = t[0];
    const key = t.slice(1).trim();
    if ((sign !== '+' && sign !== '-') || key === '')
      throw new UsageError(
        sign === '+' || sign === '-'
          ? `--icd10: "${t}" names no code after the ${sign}`
          : `--icd10: "${t}" has no + or - in front`,
        'Give +ID to add a code and -ID to remove one (an ICD-10 id or code), e.g. --icd10 +M54.50,-S83.511A',
      );
    const k = isUuid(key) ? key.toLowerCase() : key.toUpperCase();
    const list = sign === '+' ? out.add : out.remove;
    if (!list.includes(k)) list.push(k);
  }
  const both = out.add.filter((k) => out.remove.includes(k));
  if (both.length > 0) throw new UsageError(`--icd10: ${both.join(', ')} is both added and removed`);
  return out;
}

/** The fields the flags set (all but the ICD-10 codes); '' clears a text field (null). */
export function flagFields(flags: UpdateFlags): Obj {
  const out: Obj = {};
  const text = (v: string | undefined) => (v === undefined ? undefined : v.trim() === '' ? null : v.trim());
  const id = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (v.trim() === '') return null;
    if (!isUuid(v.trim())) throw new UsageError(`${flag} needs an id (a UUID), not "${v}"`);
    return v.trim().toLowerCase();
  };
  const set = (key: string, v: unknown) => {
    if (v !== undefined) out[key] = v;
  };
  set('wc_number', text(flags.wcNumber));
  set('insurance_number', text(flags.insuranceNumber));
  set('law_firm_id', id('--law-firm', flags.lawFirm));
  set('practice_id', id('--practice', flags.practice));
  set('provider_id', id('--provider', flags.provider));
  return out;
}

/** `--file`'s fields: `{ "referral": { … } }` or the fields alone; none may also come from a flag. */
export function fileFields(parsed: unknown, source: string, flagKeys: readonly string[]): Obj {
  const inner =
    isObj(parsed) && isObj(parsed.referral) && Object.keys(parsed).length === 1 ? parsed.referral : parsed;
  if (!isObj(inner))
    throw new UsageError(`${source} must hold a JSON object of referral fields`, 'Nothing was sent.');
  const twice = Object.keys(inner).filter((k) => flagKeys.includes(k));
  if (twice.length > 0)
    throw new UsageError(
      `${twice.join(', ')} given both in ${source} and by a flag`,
      'Give each field once.',
    );
  return inner;
}

/** The ICD-10 codes `keys` name (ids or codes), each looked up; a usage error names those that do not exist. */
export async function lookUpIcd10(ctx: Context, keys: readonly string[]): Promise<Map<string, Icd10Code>> {
  const found = new Map<string, Icd10Code>();
  if (keys.length === 0) return found;
  const client = ctx.referenceApi();
  const read = async (query: Record<string, string | string[] | number>) => {
    const res = await client.request<{ icd10_codes?: unknown }>({ path: '/icd10_codes', query });
    const list = isObj(res.data) ? res.data.icd10_codes : undefined;
    if (!Array.isArray(list))
      throw new UnreadableAnswerError('the ICD-10 answer has no icd10_codes list', res.requestId);
    return list.filter(isObj) as unknown as Icd10Code[];
  };
  const ids = keys.filter(isUuid);
  if (ids.length > 0)
    for (const c of await read({ 'ids[]': ids, per_page: Math.max(ids.length, 25) }))
      if (ids.includes(String(c.id).toLowerCase())) found.set(String(c.id).toLowerCase(), c);
  for (const code of keys.filter((k) => !isUuid(k))) {
    const exact = (await read({ q: code, per_page: 100 })).find((c) => String(c.code).toUpperCase() === code);
    if (exact) found.set(code, exact);
  }
  const missing = keys.filter((k) => !found.has(k));
  if (missing.length > 0)
    throw new UsageError(
      `--icd10: no ICD-10 code has the ${missing.length === 1 ? 'id or code' : 'ids or codes'} ${missing.join(', ')}`,
      'Nothing was changed. Find codes with: imaging icd10 WORDS',
    );
  return found;
}

/** The referral's ICD-10 ids after the changes: its own, the added ones after them, the removed ones left out. */
export function nextIcdIds(
  before: Referral,
  changes: IcdChanges,
  codes: ReadonlyMap<string, Icd10Code>,
): string[] {
  const current = (Array.isArray(before.icd10_codes) ? before.icd10_codes : []).map((c) => String(c.id));
  const idOf = (k: string) => String(codes.get(k)?.id ?? k);
  const removed = changes.remove.map(idOf);
  const absent = changes.remove.filter((k) => !current.includes(idOf(k)));
  if (absent.length > 0)
    throw new UsageError(
      `--icd10: ${absent.join(', ')} ${absent.length === 1 ? 'is' : 'are'} not on referral ${clean(before.reference)}`,
      `Nothing was changed. Its codes are listed by: imaging referrals get ${clean(before.reference ?? before.id)} --fields icd10_codes`,
    );
  const kept = current.filter((id) => !removed.includes(id));
  for (const id of changes.add.map(idOf)) if (!kept.includes(id)) kept.push(id);
  return kept;
}

/** A referral from a write's answer: the snapshot itself, or `{ "referral": … }`. */
export function snapshotOf(data: unknown): Referral | undefined {
  const r = isObj(data) && isObj(data.referral) ? data.referral : data;
  return isObj(r) && typeof r.id === 'string' ? (r as Referral) : undefined;
}

export interface Change {
  field: string;
  before: unknown;
  after: unknown;
}

/** Every top-level field whose value differs between the two snapshots, in the order of `after`. */
export function changesBetween(before: Referral, after: Referral): Change[] {
  const keys = [...new Set([...Object.keys(after), ...Object.keys(before)])];
  return keys
    .filter((k) => JSON.stringify(none(before[k])) !== JSON.stringify(none(after[k])))
    .map((field) => ({ field, before: before[field], after: after[field] }));
}

/** Absent, null and '' are one value, "none": clearing a field that had none is no change. */
export const none = (v: unknown): unknown => (v === undefined || v === '' ? null : v);

/** One value as a person reads it in the change list (cleaned by the caller's stream). */
export function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)';
  if (Array.isArray(value))
    return value.length === 0
      ? '(none)'
      : value.map((v) => (isObj(v) && typeof v.code === 'string' ? v.code : shown(v))).join(', ');
  if (isObj(value)) {
    const name = typeof value.name === 'string' && value.name !== '' ? value.name : undefined;
    const id = typeof value.id === 'string' ? value.id : undefined;
    if (name || id || Object.keys(value).every((k) => value[k] === null))
      return name && id ? `${name} (${id})` : (name ?? id ?? '(none)');
    return JSON.stringify(value);
  }
  return String(value);
}

/** The update's field a change of `field` answers ("law_firm_id" -> "law_firm"). */
export function referralKeyOf(bodyKey: string): string {
  if (bodyKey === 'icd10_code_ids') return 'icd10_codes';
  return bodyKey.replace(/_id$/, '');
}
