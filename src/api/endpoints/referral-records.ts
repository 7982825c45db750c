import type { ApiClient, ApiResponse } from '../client.js';

/**
 * A referral's payments and notifications: the spec names these reads but not their paths, so each
 * environment may set them (`imaging config set path.payments …`; see operations.ts).
 */
export type RecordKind = 'payments' | 'notifications';

export function getReferralRecords(
  client: ApiClient,
  method: string,
  path: string,
): Promise<ApiResponse<unknown>> {
  return client.request<unknown>({ method, path });
}
