import type { BodyPart, CptMapping, Icd10Code, Modality } from '../../api/types.js';
import type { Column } from '../render.js';

/**
 * Table columns of the reference records, with their priorities at a narrow terminal (1 is kept
 * longest; output/table.ts): codes, ids and slugs are `keep` (never cut), names wrap; `text` names the fields a table shows as text (checked
 * before a table is drawn, so an answer of the wrong shape is a clear error, not a wrong table).
 */

export const modalityColumns: Column<Modality>[] = [
  { header: 'Name', get: (m) => m.name, priority: 1 },
  { header: 'Slug', get: (m) => m.slug, priority: 3, fit: 'keep' },
  { header: 'ID', get: (m) => m.id, priority: 2, fit: 'keep' },
];
export const MODALITY_TEXT = ['name', 'slug', 'id'];

export const bodyPartColumns: Column<BodyPart>[] = [
  { header: 'Name', get: (b) => b.name, priority: 1 },
  { header: 'Slug', get: (b) => b.slug, priority: 4, fit: 'keep' },
  {
    header: 'Laterality',
    get: (b) => (b.laterality === true ? 'yes' : b.laterality === false ? 'no' : b.laterality),
    priority: 3,
    fit: 'keep',
  },
  { header: 'ID', get: (b) => b.id, priority: 2, fit: 'keep' },
];
export const BODY_PART_TEXT = ['name', 'slug', 'laterality', 'id'];

export const cptColumns: Column<CptMapping>[] = [
  { header: 'Code', get: (m) => m.code, priority: 1, fit: 'keep' },
  { header: 'Modality', get: (m) => m.modality_name, priority: 5, fit: 'keep' },
  { header: 'Body part', get: (m) => m.body_part_name, priority: 2, min: 10 },
  { header: 'Contrast', get: (m) => m.contrast, priority: 4 },
  { header: 'Laterality', get: (m) => m.laterality, priority: 3, fit: 'keep' },
  { header: 'Modifier', get: (m) => m.modifier_name, priority: 7, fit: 'keep' },
  { header: 'Views', get: (m) => m.number_of_views, priority: 8, fit: 'keep' },
  { header: 'ID', get: (m) => m.id, priority: 6, fit: 'keep' },
];
export const CPT_TEXT = [
  'code',
  'modality_name',
  'body_part_name',
  'contrast',
  'laterality',
  'modifier_name',
  'number_of_views',
  'id',
];

export const icd10Columns: Column<Icd10Code>[] = [
  { header: 'Code', get: (x) => x.code, priority: 1, fit: 'keep' },
  { header: 'Description', get: (x) => x.short_description, priority: 2 },
  { header: 'ID', get: (x) => x.id, priority: 3, fit: 'keep' },
];
export const ICD10_TEXT = ['code', 'short_description', 'id'];
