import type { ApiClient, ApiResponse } from '../client.js';
import type { Referral } from '../types.js';
import type { Query } from '../url.js';
import type { ListEndpoint } from './list.js';

export const REFERRALS_PATH = '/referrals';
const referralPath = (id: string) => `${REFERRALS_PATH}/${encodeURIComponent(id)}`;

/** The referral list; its filters are not published, so the query passes through as given. */
export function referrals(query: Query = {}): ListEndpoint<Referral> {
  return { path: REFERRALS_PATH, key: 'referrals', query };
}

export function getReferral(client: ApiClient, id: string): Promise<ApiResponse<Referral>> {
  return client.request<Referral>({ path: referralPath(id) });
}

/** The create payload is not published: the bytes go as they are (after the caller's syntax check). */
export function createReferral(client: ApiClient, body: Buffer | string): Promise<ApiResponse<Referral>> {
  return client.request<Referral>({ method: 'POST', path: REFERRALS_PATH, body });
}
