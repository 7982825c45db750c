import type { Procedure, Visit } from '../api/types.js';
import { bareLink } from '../util/link.js';
import { type Cell, list, obj, REPEATED, type RowColumn, str } from './schema.js';

// The export's visit and procedure rows; `REPEATED`: a visit column each procedure row carries too.

export type V = Partial<Visit> & Record<string, unknown>;
export type P = Partial<Procedure> & Record<string, unknown>;

/** The values of a list column, as text, blanks left out (CSV joins them with `; `). */
const texts = (xs: unknown[]): string[] =>
  xs.filter((x) => x !== null && x !== undefined && x !== '').map((x) => str(x) as string);

const loc = (v: V | undefined) => obj(v?.location);
// A signed link's query string is a credential: a row file (CSV, a workbook) mailed around keeps
// only the link's name (`referrals download` fetches the file itself).
const link = (v: unknown): Cell => (typeof v === 'string' ? bareLink(v).url : str(v));
const codes = (v: V | undefined, key: 'cpt_code' | 'accession_id'): Cell =>
  v ? texts(list<P>(v.procedures).map((p) => p[key])) : null;

export const VISIT_ROW: readonly RowColumn<V | undefined>[] = [
  ['visit_id', (v) => str(v?.id), REPEATED],
  ['modality', (v) => str(v?.modality), REPEATED],
  ['visit_status', (v) => str(v?.status), REPEATED],
  ['start_time', (v) => str(v?.start_time), REPEATED],
  ['location_id', (v) => str(loc(v).id)],
  ['location_name', (v) => str(loc(v).name), REPEATED],
  ['location_address_line_1', (v) => str(loc(v).address_line_1)],
  ['location_address_line_2', (v) => str(loc(v).address_line_2)],
  ['location_city', (v) => str(loc(v).city), REPEATED],
  ['location_state', (v) => str(loc(v).state), REPEATED],
  ['location_zip_code', (v) => str(loc(v).zip_code)],
  ['location_npi', (v) => str(loc(v).npi)],
  ['radiologist_group_name', (v) => str(v?.radiologist_group_name)],
  ['procedure_count', (v) => (v ? list(v.procedures).length : null)],
  ['cpt_codes', (v) => codes(v, 'cpt_code')],
  ['accession_ids', (v) => codes(v, 'accession_id')],
];

/** `index`: the procedure's place in its visit, from 1 (null when the visit has none). */
export const PROCEDURE_ROW: readonly RowColumn<P | undefined>[] = [
  ['procedure_index', (_p, index) => index],
  ['body_part', (p) => str(p?.body_part)],
  ['procedure', (p) => str(p?.procedure)],
  ['contrast', (p) => str(p?.contrast)],
  ['laterality', (p) => str(p?.laterality)],
  ['cpt_code', (p) => str(p?.cpt_code)],
  ['cpt_code_id', (p) => str(p?.cpt_code_id)],
  ['cpt_system', (p) => str(p?.cpt_system)],
  ['accession_id', (p) => str(p?.accession_id)],
  ['study_uid', (p) => str(p?.study_uid)],
  ['series_uid', (p) => str(p?.series_uid)],
  ['report_link', (p) => link(p?.report_link)],
  ['image_link', (p) => link(p?.image_link)],
];
