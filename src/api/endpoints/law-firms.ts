import type { ApiClient, ApiResponse } from '../client.js';
import type { LawFirm } from '../types.js';
import type { ListEndpoint } from './list.js';

const LAW_FIRMS_PATH = '/law_firms';

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
