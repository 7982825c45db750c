import type { Modality } from '../api/types.js';
import { defineResource } from './schema.js';

// At a narrow terminal (output/table.ts) 1 is kept longest; ids and slugs are never cut, names wrap.
export const {
  fields: MODALITY_FIELDS,
  columns: modalityColumns,
  text: MODALITY_TEXT,
} = defineResource<Modality>({ id: true, name: true, slug: true }, [
  { header: 'Name', field: 'name', priority: 1 },
  { header: 'Slug', field: 'slug', priority: 3, fit: 'keep' },
  { header: 'ID', field: 'id', priority: 2, fit: 'keep' },
]);
