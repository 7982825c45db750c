import type { ApiClient, ApiResponse } from '../client.js';
import type { LawFirm } from '../types.js';
import type { ListEndpoint } from './list.js';

export const LAW_FIRMS_PATH = '/law_firms';

/** Law firm search: `q` against name and contact fields. */
export function lawFirms(q: string): ListEndpoint<LawFirm> {
  return { path: LAW_FIRMS_PATH, key: 'law_firms', query: { q } };
}

export interface NewLawFirm {
  name: string;
  city: string;
  state: string;
  address_line_1?: string;
  address_line_2?: string;
  zipcode?: string;
}

/** Requests a new firm (created pending); the answer is `{ law_firm }` or the firm itself. */
export function createLawFirm(
  client: ApiClient,
  lawFirm: NewLawFirm,
): Promise<ApiResponse<{ law_firm?: LawFirm } | LawFirm>> {
  return client.request<{ law_firm?: LawFirm } | LawFirm>({
    method: 'POST',
    path: LAW_FIRMS_PATH,
    json: { law_firm: lawFirm },
  });
}
