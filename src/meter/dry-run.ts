import type { ApiClient } from '../api/client.js';
import { REFERRALS_PATH } from '../api/endpoints/referrals.js';
import { extractList } from '../api/pages.js';
import { readingAnswer } from '../api/shape.js';
import type { Query } from '../api/url.js';
import type { Context } from '../context.js';
import { describeView, leftOf } from './meter.js';

/**
 * `referrals export --dry-run`: page 1 only (one request, in every environment), and what the
 * whole export would take: referrals, pages and requests (page 1 included, as the export fetches
 * it again). Text on stdout, or a JSON object with --json / --format json.
 */
export async function dryRun(
  ctx: Context,
  client: ApiClient,
  query: Query,
  perPage: number,
): Promise<number> {
  const res = await client.request({ path: REFERRALS_PATH, query: { ...query, page: 1, per_page: perPage } });
  const list = readingAnswer(res.requestId, () => extractList(res.data, 'referrals'));
  const meta = list.meta;
  const whole = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
  const referrals = whole(meta?.total_count);
  let pages = whole(meta?.total_pages);
  if (pages === undefined && referrals !== undefined && list.items.length > 0)
    pages = Math.max(1, Math.ceil(referrals / list.items.length));
  if (pages === undefined && list.items.length === 0 && !meta) pages = 1;
  const requests = pages === undefined ? undefined : Math.max(1, pages);
  ctx.flushMeters();
  const view = ctx.meter()?.view();
  const report = {
    referrals: referrals ?? null,
    pages: pages ?? null,
    per_page: perPage,
    requests: requests ?? null,
    allowance_left: view ? leftOf(view) : null,
  };
  if (ctx.globals.json || ctx.globals.format?.trim().toLowerCase() === 'json') {
    ctx.io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const n = (v: number | undefined, unit: string) =>
    v === undefined
      ? `an unknown number of ${unit}s`
      : `${v.toLocaleString('en-US')} ${unit}${v === 1 ? '' : 's'}`;
  ctx.out.line(
    `Dry run: the export would fetch ${n(referrals, 'referral')} in ${n(pages, 'page')} of ${perPage}, taking ${n(requests, 'request')} (retries aside).`,
  );
  if (requests === undefined)
    ctx.out.line(
      'The server sent no totals on page 1 (total_pages / total_count): the cost is known only by walking the pages.',
    );
  if (view) {
    const left = leftOf(view);
    ctx.out.line(
      `Sandbox allowance: ${describeView(view, ctx.now().getTime())}; ≈${left.toLocaleString('en-US')} left.`,
    );
    if (requests !== undefined && requests > left)
      ctx.out.line(
        'That is more than is left: the export would stop with exit 6 after page 1 unless given --yes.',
      );
  }
  ctx.note('Nothing was written; this dry run took 1 request.');
  return 0;
}
