import type { BodyPart, CptMapping, Icd10Code, Modality } from '../../api/types.js';
import type { Column } from '../render.js';

/**
 * Table columns of the reference records; `text` names the fields a table shows as text (checked
 * before a table is drawn, so an answer of the wrong shape is a clear error, not a wrong table).
 */

export const modalityColumns: Column<Modality>[] = [
  { header: 'Name', get: (m) => m.name },
  { header: 'Slug', get: (m) => m.slug },
  { header: 'ID', get: (m) => m.id },
];
export const MODALITY_TEXT = ['name', 'slug', 'id'];

export const bodyPartColumns: Column<BodyPart>[] = [
  { header: 'Name', get: (b) => b.name },
  { header: 'Slug', get: (b) => b.slug },
  {
    header: 'Laterality',
    get: (b) => (b.laterality === true ? 'yes' : b.laterality === false ? 'no' : b.laterality),
  },
  { header: 'ID', get: (b) => b.id },
];
export const BODY_PART_TEXT = ['name', 'slug', 'laterality', 'id'];

export const cptColumns: Column<CptMapping>[] = [
  { header: 'Code', get: (m) => m.code },
  { header: 'Modality', get: (m) => m.modality_name },
  { header: 'Body part', get: (m) => m.body_part_name },
  { header: 'Contrast', get: (m) => m.contrast },
  { header: 'Laterality', get: (m) => m.laterality },
  { header: 'Modifier', get: (m) => m.modifier_name },
  { header: 'Views', get: (m) => m.number_of_views },
  { header: 'ID', get: (m) => m.id },
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
  { header: 'Code', get: (x) => x.code },
  { header: 'Description', get: (x) => x.short_description },
  { header: 'ID', get: (x) => x.id },
];
export const ICD10_TEXT = ['code', 'short_description', 'id'];
