import { normaliseBaseUrl } from '../api/url.js';
import type { Context } from '../context.js';
import { type AllowanceView, meterKey, meterPath, readView } from './meter.js';

export function allowanceOf(
  ctx: Context,
  baseUrl: string | undefined,
  token: string | undefined,
): AllowanceView | null {
  if (!baseUrl || !token) return null;
  let origin: string;
  try {
    origin = new URL(normaliseBaseUrl(baseUrl)).origin;
  } catch {
    return null;
  }
  return readView(meterPath(ctx.env), meterKey(origin, token), ctx.now().getTime());
}
