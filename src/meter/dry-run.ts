import type { ApiClient } from '../api/client.js';
import { REFERRALS_PATH } from '../api/endpoints/referrals.js';
import { extractList } from '../api/pages.js';
import { readingAnswer } from '../api/shape.js';
import type { Query } from '../api/url.js';
import type { Context } from '../context.js';
import type { Checkpoint } from '../export/checkpoint.js';
import { writeJson } from '../output/write.js';
import { count, num, whole } from '../util/plural.js';
import { describeView, leftOf } from './meter.js';

/** `referrals export --dry-run`: page 1 only, and what the export (or the rest of it) would take. */
export async function dryRun(
  ctx: Context,
  client: ApiClient,
  query: Query,
  perPage: number,
  survey?: Awaited<ReturnType<Checkpoint['survey']>>,
): Promise<number> {
  const first = survey?.page ?? 1;
  const skip = first - 1;
  const res = await client.request({
    path: REFERRALS_PATH,
    query: { ...query, page: first, per_page: perPage },
  });
  const list = readingAnswer(res.requestId, () => extractList(res.data, 'referrals'));
  const meta = list.meta;
  const total = whole(meta?.total_count);
  let totalPages = whole(meta?.total_pages);
  if (totalPages === undefined && total !== undefined && (list.items.length > 0 || skip > 0))
    totalPages = Math.max(1, Math.ceil(total / (skip > 0 ? perPage : list.items.length)));
  if (totalPages === undefined && list.items.length === 0 && !meta) totalPages = skip + 1;
  const referrals = total === undefined ? undefined : Math.max(0, total - (survey ? survey.referrals : 0));
  const pages = totalPages === undefined ? undefined : Math.max(0, totalPages - skip);
  const requests = pages === undefined ? undefined : Math.max(1, pages);
  const changed = survey?.seam(list.items, meta) ?? [];
  ctx.flushMeters();
  const view = ctx.meter()?.view();
  const report = {
    referrals: referrals ?? null,
    pages: pages ?? null,
    per_page: perPage,
    requests: requests ?? null,
    allowance_left: view ? leftOf(view) : null,
    ...(survey
      ? {
          resume: {
            from_page: first,
            checkpoint_pages: survey.pages,
            checkpoint_referrals: survey.referrals,
            saved: survey.saved,
            list_changed: changed.length > 0 ? changed.join('; ') : null,
          },
        }
      : {}),
  };
  if (ctx.globals.json || ctx.globals.format?.trim().toLowerCase() === 'json') {
    writeJson(ctx.sink(), report);
    return 0;
  }
  const n = (v: number | undefined, unit: string) =>
    v === undefined ? `an unknown number of ${unit}s` : count(v, unit);
  if (survey)
    ctx.out.line(
      `Dry run: the checkpoint holds ${n(survey.pages, 'page')} (${n(survey.referrals, 'referral')}); --resume would fetch ${referrals === undefined ? 'the remaining referrals' : n(referrals, 'more referral')} in ${n(pages, 'page')} of ${perPage}${pages ? ` (from page ${first})` : ''}, taking ${n(requests, 'request')} (retries aside).`,
    );
  else
    ctx.out.line(
      `Dry run: the export would fetch ${n(referrals, 'referral')} in ${n(pages, 'page')} of ${perPage}, taking ${n(requests, 'request')} (retries aside).`,
    );
  if (changed.length > 0)
    ctx.out.line(
      `But the referral list changed since the checkpoint was saved (${changed.join('; ')}): --resume would refuse to continue it (exit 1); the export must start over without --resume.`,
    );
  if (requests === undefined)
    ctx.out.line(
      `The server sent no totals on page ${first} (total_pages / total_count): the cost is known only by walking the pages.`,
    );
  if (view) {
    const left = leftOf(view);
    ctx.out.line(`Sandbox allowance: ${describeView(view, ctx.now().getTime())}; ≈${num(left)} left.`);
    if (requests !== undefined && requests > left)
      ctx.out.line(
        `That is more than is left: the ${survey ? 'resumed export' : 'export'} would stop with exit 6 after page ${first} unless given --yes.`,
      );
  }
  ctx.note('Nothing was written; this dry run took 1 request.');
  return 0;
}
