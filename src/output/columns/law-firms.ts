import type { LawFirm } from '../../api/types.js';
import type { Column } from '../render.js';

const address = (f: LawFirm) => [f.address_line_1, f.address_line_2].filter(Boolean).join(', ');

export const lawFirmColumns: Column<LawFirm>[] = [
  // At a narrow terminal (output/table.ts): the name wraps, the id is never cut.
  { header: 'Name', get: (f) => f.name, priority: 1 },
  { header: 'City', get: (f) => f.city, priority: 3, min: 10 },
  { header: 'State', get: (f) => f.state, priority: 4, fit: 'keep' },
  { header: 'Zip', get: (f) => f.zipcode, priority: 5, fit: 'keep' },
  { header: 'Address', get: address, priority: 6 },
  { header: 'ID', get: (f) => f.id, priority: 2, fit: 'keep' },
];

/** One firm as label: value lines. */
export const lawFirmFields = (f: LawFirm): Array<[string, unknown]> => [
  ['Name', f.name],
  ['ID', f.id],
  ['Address', address(f)],
  ['City', f.city],
  ['State', f.state],
  ['Zip', f.zipcode],
];

export const LAW_FIRM_TEXT = ['name', 'city', 'state', 'zipcode', 'address_line_1', 'address_line_2', 'id'];
