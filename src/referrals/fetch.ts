import type { ApiResponse } from '../api/client.js';
import { getReferral } from '../api/endpoints/referrals.js';
import type { Referral } from '../api/types.js';
import { isUuid } from '../cli/args.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';

/**
 * GET /referrals/{id}. A 404 for a UUID says it may be a visit's id (they look alike, and the API has no
 * visit lookup to tell): no second request is made to find out.
 */
export async function fetchReferral(ctx: Context, id: string): Promise<ApiResponse<Referral>> {
  try {
    return await getReferral(ctx.api(), id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404 && isUuid(id) && !err.hintOverridden)
      throw new ApiError(
        err.details,
        `No referral has this id. If this is a visit's id, give its referral's id or reference (the ID and REFERENCE columns of: imaging referrals list --wide).`,
      );
    throw err;
  }
}
