import type { LawFirm } from '../../api/types.js';
import type { Column } from '../render.js';

const address = (f: LawFirm) => [f.address_line_1, f.address_line_2].filter(Boolean).join(', ');

export const lawFirmColumns: Column<LawFirm>[] = [
  { header: 'Name', get: (f) => f.name },
  { header: 'City', get: (f) => f.city },
  { header: 'State', get: (f) => f.state },
  { header: 'Zip', get: (f) => f.zipcode },
  { header: 'Address', get: address },
  { header: 'ID', get: (f) => f.id },
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
