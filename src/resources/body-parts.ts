import type { BodyPart } from '../api/types.js';
import { defineResource } from './schema.js';

export const {
  fields: BODY_PART_FIELDS,
  columns: bodyPartColumns,
  text: BODY_PART_TEXT,
} = defineResource<BodyPart>({ id: true, name: true, slug: true, laterality: true }, [
  { header: 'Name', field: 'name', priority: 1 },
  { header: 'Slug', field: 'slug', priority: 4, fit: 'keep' },
  {
    header: 'Laterality',
    field: 'laterality',
    show: (v) => (v === true ? 'yes' : v === false ? 'no' : v),
    priority: 3,
    fit: 'keep',
  },
  { header: 'ID', field: 'id', priority: 2, fit: 'keep' },
]);
