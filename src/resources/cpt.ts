import type { CptMapping } from '../api/types.js';
import { defineResource } from './schema.js';

export const {
  fields: CPT_FIELDS,
  columns: cptColumns,
  text: CPT_TEXT,
} = defineResource<CptMapping>(
  {
    id: true,
    code: true,
    modality_id: true,
    modality_name: true,
    body_part_id: true,
    body_part_name: true,
    contrast: true,
    laterality: true,
    modifier_id: true,
    modifier_name: true,
    number_of_views: true,
  },
  [
    { header: 'Code', field: 'code', priority: 1, fit: 'keep' },
    { header: 'Modality', field: 'modality_name', priority: 5, fit: 'keep' },
    { header: 'Body part', field: 'body_part_name', priority: 2, min: 10 },
    { header: 'Contrast', field: 'contrast', priority: 4 },
    { header: 'Laterality', field: 'laterality', priority: 3, fit: 'keep' },
    { header: 'Modifier', field: 'modifier_name', priority: 7, fit: 'keep' },
    { header: 'Views', field: 'number_of_views', priority: 8, fit: 'keep' },
    { header: 'ID', field: 'id', priority: 6, fit: 'keep' },
  ],
);
