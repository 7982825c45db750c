import type { ApiClient, ApiResponse } from '../client.js';

const SSO_PATH = '/auth/sso';

/** A one-time partner portal URL: a credential, never traced or stored. */
export function createSsoUrl(client: ApiClient): Promise<ApiResponse<{ url?: unknown }>> {
  return client.request<{ url?: unknown }>({ method: 'POST', path: SSO_PATH });
}
