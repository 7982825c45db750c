import type { Icd10Code } from '../api/types.js';
import { defineResource } from './schema.js';

export const {
  fields: ICD10_FIELDS,
  columns: icd10Columns,
  text: ICD10_TEXT,
} = defineResource<Icd10Code>({ id: true, code: true, short_description: true }, [
  { header: 'Code', field: 'code', priority: 1, fit: 'keep' },
  { header: 'Description', field: 'short_description', priority: 2 },
  { header: 'ID', field: 'id', priority: 3, fit: 'keep' },
]);
