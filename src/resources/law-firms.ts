import type { LawFirm } from '../api/types.js';
import { defineResource } from './schema.js';

const address = (f: LawFirm) => [f.address_line_1, f.address_line_2].filter(Boolean).join(', ');

// At a narrow terminal (output/table.ts): the name wraps, the id is never cut.
export const {
  fields: LAW_FIRM_FIELDS,
  columns: lawFirmColumns,
  text: LAW_FIRM_TEXT,
} = defineResource<LawFirm>(
  {
    id: true,
    name: true,
    address_line_1: true,
    address_line_2: true,
    city: true,
    state: true,
    zipcode: true,
  },
  [
    { header: 'Name', field: 'name', priority: 1 },
    { header: 'City', field: 'city', priority: 3, min: 10 },
    { header: 'State', field: 'state', priority: 4, fit: 'keep' },
    { header: 'Zip', field: 'zipcode', priority: 5, fit: 'keep' },
    { header: 'Address', get: address, reads: ['address_line_1', 'address_line_2'], priority: 6 },
    { header: 'ID', field: 'id', priority: 2, fit: 'keep' },
  ],
);

const ONE = ['Name', 'ID', 'Address', 'City', 'State', 'Zip'].map(
  (h) => lawFirmColumns.find((c) => c.header === h)!,
);

/** One firm as label: value lines. */
export const lawFirmFields = (f: LawFirm): Array<[string, unknown]> => ONE.map((c) => [c.header, c.get(f)]);
