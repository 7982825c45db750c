import { checkReferralStructure } from '../referrals/check.js';
import { EXPORT_COLUMNS, type R, REFERRAL_ROW } from '../resources/referrals.js';
import { type Cell, list, type RowColumn } from '../resources/schema.js';
import { type P, PROCEDURE_ROW, type V, VISIT_ROW } from '../resources/visits.js';

export type RowKind = keyof typeof EXPORT_COLUMNS;
export type Row = Record<string, Cell>;
export const COLUMNS: Record<RowKind, readonly string[]> = EXPORT_COLUMNS;

function fill<S>(
  row: Row,
  columns: readonly RowColumn<S>[],
  source: S,
  index: number | null,
  repeatedOnly = false,
) {
  for (const [name, get, repeated] of columns)
    if (!repeatedOnly || repeated) row[name] = get(source, index) ?? null;
  return row;
}

export function csvValue(v: Row[string] | undefined): string | number | boolean | null {
  if (!Array.isArray(v)) return v ?? null;
  return v.length > 0 ? v.join('; ') : null;
}

/**
 * The rows of one referral: one with no (matching) visits, or a visit with no procedures, still
 * gives one row with those columns empty. `visitFilter` leaves out referrals with no such visit.
 */
export function rowsOf(referral: unknown, kind: RowKind, visitFilter?: ReadonlySet<string>): Row[] {
  // A list that is not a list would silently lose visits: stop with where instead.
  const rawId = (referral as { id?: unknown } | null)?.id;
  const id = typeof rawId === 'string' ? rawId : '';
  const r = checkReferralStructure(
    referral,
    /^[0-9a-f-]{36}$/i.test(id) ? `referral ${id}` : 'a referral',
  ) as R;
  const allVisits = list<V>(r.visits);
  const visits = visitFilter
    ? allVisits.filter((v) => typeof v.status === 'string' && visitFilter.has(v.status))
    : allVisits;
  if (visitFilter && visits.length === 0) return [];
  if (kind === 'referral') return [fill({}, REFERRAL_ROW, r, null)];
  const context = fill({}, REFERRAL_ROW, r, null, true);
  const rows: Row[] = [];
  for (const v of visits.length > 0 ? visits : [undefined]) {
    if (kind === 'visit') {
      rows.push(fill({ ...context }, VISIT_ROW, v, null));
      continue;
    }
    const head = fill({ ...context }, VISIT_ROW, v, null, true);
    const procs = list<P>(v?.procedures);
    if (procs.length === 0) rows.push(fill({ ...head }, PROCEDURE_ROW, undefined, null));
    procs.forEach((p, i) => {
      rows.push(fill({ ...head }, PROCEDURE_ROW, p, i + 1));
    });
  }
  return rows;
}

export function hasVisitIn(referral: unknown, statuses: ReadonlySet<string>): boolean {
  const visits = list<V>((referral as { visits?: unknown } | null)?.visits);
  return visits.some((v) => typeof v.status === 'string' && statuses.has(v.status));
}
