import { REFERRALS_PATH } from '../api/endpoints/referrals.js';
import { fetchPagesInOrder, hasNextPage, type OrderedPage } from '../api/pages.js';
import type { Referral } from '../api/types.js';
import { isUuid } from '../cli/args.js';
import type { Context } from '../context.js';
import { ApiError, CliError, ExitCode, UsageError } from '../errors.js';
import { checkCost, remainingAfterFirst, WalkGuard } from '../meter/cost.js';
import { clean } from '../output/text.js';
import { patientName } from '../resources/referrals.js';
import { num } from '../util/plural.js';
import { fold, type ReferralSearch, referralSearch } from './match.js';

/**
 * A referral named by its id or its reference. A UUID costs no request; any other text is a
 * reference (any case, any shape), looked up through the list: `referral` is the list's record.
 * Nothing found or read here is written anywhere: no cache, no temporary file.
 */
export interface ResolvedReferral {
  id: string;
  reference?: string;
  referral?: Referral;
  /** Only with `keepMissing`: no referral has this reference (`id` is the text given). */
  missing?: true;
}

export interface ResolveOptions {
  /** A reference not found comes back marked `missing` instead of ending the run (exit 4). */
  keepMissing?: boolean;
  /** Called as each reference has been looked up (for a progress bar). */
  onLookup?: () => void;
}

/** What a search found, and what it read for the not-found message ("the referral list with q (1 page)"). */
export interface SearchOutcome {
  records: Referral[];
  searched: string;
  pages: number;
}

const PER_PAGE = 100;
const CONCURRENCY = 4;
/** A scan of more pages than this shows its cost in the sandbox first. */
const SCAN_SHOWN_OVER = 10;

/** One referral: a UUID as is (lower case), a reference through the list; exit 4 / exit 2 otherwise. */
export async function resolveReferral(ctx: Context, text: string): Promise<ResolvedReferral> {
  const [one] = await resolveReferrals(ctx, [text]);
  return one!;
}

/**
 * Many referrals, in the order given: references are looked up with the list's q (a few at a time)
 * while the server honours it, and all those left by one page scan at most. Every reference not
 * found is named in one exit 4; a reference naming several referrals is exit 2.
 */
export async function resolveReferrals(
  ctx: Context,
  texts: readonly string[],
  opts: ResolveOptions = {},
): Promise<ResolvedReferral[]> {
  const out: Array<ResolvedReferral | undefined> = texts.map((t) => {
    const id = t.trim();
    if (id === '')
      throw new UsageError(
        'the referral id or reference is empty',
        'Give a referral id (UUID) or its reference.',
      );
    return isUuid(id) ? { id: id.toLowerCase() } : undefined;
  });
  // Keyed by the folded reference: "r-240001" and "R-240001" are one lookup.
  const wanted = new Map<string, ReferralSearch>();
  for (const [i, t] of texts.entries())
    if (!out[i]) {
      const search = referralSearch(t);
      if (!wanted.has(fold(search.text))) wanted.set(fold(search.text), search);
    }
  if (wanted.size === 0) return out as ResolvedReferral[];
  const found = new Map<string, { records: Referral[]; searched: string }>();
  const guard = guardOf(ctx);
  let honoured = true;
  // The answer that showed q ignored: page 1 of the plain list, which the scan starts from.
  let plainFirst: OrderedPage | undefined;
  const step = async ([key, search]: [string, ReferralSearch]): Promise<void> => {
    try {
      const q = await viaQ(ctx, search, guard);
      if (!q || 'ignored' in q) {
        honoured = false;
        plainFirst ??= q?.ignored;
      } else {
        found.set(key, { records: q.records.filter(search.isReference), searched: q.searched });
        opts.onLookup?.();
      }
    } catch (err) {
      honoured = false; // the other lookups stop too
      throw err;
    }
  };
  // The first alone: whether the server honours q decides how the rest are looked up.
  const [head, ...rest] = [...wanted];
  await step(head!);
  let next = 0;
  const worker = async () => {
    while (honoured && next < rest.length) await step(rest[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rest.length) }, worker));
  const left = new Set([...wanted.keys()].filter((k) => !found.has(k)));
  if (left.size > 0) {
    const refOf = (r: unknown) => {
      const ref = (r as { reference?: unknown } | null)?.reference;
      return typeof ref === 'string' ? fold(ref) : undefined;
    };
    const seen = new Set<string>();
    const scanned = await scan(
      ctx,
      guard,
      (r) => left.has(refOf(r) ?? ''),
      (records) => {
        seen.add(refOf(records[records.length - 1])!);
        return seen.size === left.size;
      },
      plainFirst,
    );
    for (const key of left) {
      opts.onLookup?.();
      found.set(key, {
        records: scanned.records.filter((r) => refOf(r) === key),
        searched: scanned.searched,
      });
    }
  }
  return settle(ctx, texts, out, found, opts.keepMissing === true);
}

/** The records each reference names: one each, or exit 2 (several, listed) / exit 4 (every one missing). */
function settle(
  ctx: Context,
  texts: readonly string[],
  given: ReadonlyArray<ResolvedReferral | undefined>,
  found: ReadonlyMap<string, { records: Referral[]; searched: string }>,
  keepMissing: boolean,
): ResolvedReferral[] {
  const missing: string[] = [];
  let searched = '';
  for (const [i, t] of texts.entries()) {
    if (given[i]) continue;
    const text = t.trim();
    const f = found.get(fold(text));
    const records = f?.records ?? [];
    if (records.length > 1) {
      ctx.note(`"${text}" is the reference of ${num(records.length)} referrals:`);
      for (const r of records)
        ctx.note(
          `  ${clean(r.id)}  ${clean(r.reference)}  ${clean(patientName(r) ?? '-')}  ${clean(r.status ?? '-')}`,
        );
      throw new CliError(
        `"${text}" matches ${num(records.length)} referrals`,
        ExitCode.usage,
        'Give the id (UUID) of the one meant, from the list above.',
      );
    }
    if (records.length === 0 && !missing.includes(text)) {
      missing.push(text);
      searched = f?.searched ?? 'the referral list';
    }
  }
  if (missing.length > 0 && !keepMissing)
    throw new CliError(
      `no referral has the reference ${missing.map((m) => `"${m}"`).join(', ')}: searched ${searched}`,
      ExitCode.notFound,
      'Check the reference, or search more widely with: imaging referrals find TEXT',
    );
  return texts.map((_, i) => {
    const r = given[i];
    if (r) return r;
    const record = found.get(fold(texts[i]!.trim()))?.records[0];
    if (!record) return { id: texts[i]!.trim(), missing: true };
    return { id: String(record.id), reference: record.reference, referral: record };
  });
}

/** Every referral `search` matches: the list's q when the server honours it, else a scan. */
export async function searchReferrals(ctx: Context, search: ReferralSearch): Promise<SearchOutcome> {
  const guard = guardOf(ctx);
  const q = await viaQ(ctx, search, guard);
  if (q && !('ignored' in q)) return q;
  let exact = false;
  return scan(
    ctx,
    guard,
    search.matches,
    (seen) => {
      exact ||= seen.length > 0 && search.isReference(seen[seen.length - 1]);
      return exact;
    },
    q?.ignored,
  );
}

/** One guard for all the walks of a command, made once its client (and so its meter) exists. */
function guardOf(ctx: Context): WalkGuard {
  ctx.api();
  return new WalkGuard(
    ctx,
    'This search',
    'the referral list',
    'Narrow the search (the whole reference, "last, first", a date of birth)',
  );
}

/**
 * The sandbox's checks of a walk, page by page: on page 1 the cost check when it gives a total over
 * 10 pages (piped, without --yes: exit 6; a terminal is asked); before each page after, the question past 10 pages of a
 * list with no total, the stop after the last page a total announced, and the meter's used-up stop.
 */
class WalkCheck {
  private remaining: number | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly guard: WalkGuard,
    private readonly scanning: boolean,
  ) {}

  async first(page: OrderedPage): Promise<void> {
    if (this.guard.active) this.remaining = await firstPageCost(this.ctx, this.guard, page, this.scanning);
  }

  /** Before the page after `page`, the `pages`-th read. */
  async next(page: OrderedPage, pages: number): Promise<void> {
    if (!this.guard.active || !hasNextPage(page, pages)) return;
    // One budget: never a page past those page 1 announced, which the cost check counted.
    if (this.remaining !== undefined && pages > this.remaining) this.guard.pastAnnounced(pages);
    await this.guard.beforeNext(pages, this.remaining !== undefined);
  }
}

/** What page 1 tells of the pages to come (undefined: nothing, or a total its next_page contradicts). */
function remainingOf(first: OrderedPage): number | undefined {
  const meta = first.meta;
  if (typeof meta?.total_pages === 'number' && first.totalPages === undefined) return undefined;
  return remainingAfterFirst(meta?.total_pages, meta?.total_count, first.items.length);
}

function walk(ctx: Context, query: Record<string, string>, firstPage?: OrderedPage) {
  return fetchPagesInOrder(
    ctx.api(),
    {
      path: REFERRALS_PATH,
      key: 'referrals',
      query,
      perPage: PER_PAGE,
      concurrency: CONCURRENCY,
      what: 'the referrals',
      listName: 'the list of referrals',
      parsed: true,
      firstPage,
      onNote: (text) => ctx.note(text),
    },
    ctx.signal,
  );
}

/**
 * The list with `q=TEXT`. Its query parameters are not published, so the answer is trusted only
 * when every record on its first page matches; when one does not, the server ignored q and that
 * page is page 1 of the plain list (`ignored`); undefined when q is refused.
 */
async function viaQ(
  ctx: Context,
  search: ReferralSearch,
  guard: WalkGuard,
): Promise<SearchOutcome | { ignored: OrderedPage } | undefined> {
  const records: Referral[] = [];
  let pages = 0;
  const check = new WalkCheck(ctx, guard, false);
  try {
    for await (const page of walk(ctx, { q: search.text })) {
      pages++;
      if (pages === 1) {
        if (!page.items.every(search.matches)) return { ignored: page };
        await check.first(page);
      }
      for (const r of page.items) if (search.matches(r)) records.push(r as Referral);
      await check.next(page, pages);
    }
  } catch (err) {
    if (err instanceof ApiError && (err.details.status === 400 || err.details.status === 422))
      return undefined;
    throw err;
  }
  return {
    records,
    pages,
    searched: `the referral list with q (${num(pages)} page${pages === 1 ? '' : 's'})`,
  };
}

/**
 * Every page of the list (from `first`, page 1 already read, when given), `matches` kept, until
 * `done` says the records so far are enough (a reference found). In the sandbox, a scan of more
 * than 10 pages shows its cost first, once page 1 has been looked through: a match there costs nothing more.
 */
async function scan(
  ctx: Context,
  guard: WalkGuard,
  matches: (record: unknown) => boolean,
  done: (seen: Referral[]) => boolean,
  first?: OrderedPage,
): Promise<SearchOutcome> {
  const records: Referral[] = [];
  let pages = 0;
  let read = 0;
  const check = new WalkCheck(ctx, guard, true);
  for await (const page of walk(ctx, {}, first)) {
    pages++;
    let stop = false;
    for (const r of page.items) {
      read++;
      if (!matches(r)) continue;
      records.push(r as Referral);
      if (done(records)) stop = true;
    }
    if (stop) break;
    if (pages === 1) await check.first(page);
    await check.next(page, pages);
  }
  return {
    records,
    pages,
    searched: `${num(pages)} page${pages === 1 ? '' : 's'} of the referral list (${num(read)} referral${read === 1 ? '' : 's'}), as q did not narrow it`,
  };
}

/**
 * Page 1's part of the sandbox check: a scan says what it costs, and a total over 10 pages goes
 * through the cost check; the pages to come, when page 1 tells.
 */
async function firstPageCost(
  ctx: Context,
  guard: WalkGuard,
  first: OrderedPage,
  scanning: boolean,
): Promise<number | undefined> {
  const remaining = remainingOf(first);
  if (remaining !== undefined && remaining + 1 <= SCAN_SHOWN_OVER) return remaining;
  if (scanning)
    ctx.note(
      remaining === undefined
        ? `The server did not narrow the referral list with q: searching it page by page, ${guard.onUnknown}.`
        : `The server did not narrow the referral list with q: searching its ${num(remaining + 1)} pages one by one, up to ${num(remaining)} more request${remaining === 1 ? '' : 's'}.`,
    );
  if (remaining === undefined) return remaining;
  // More than is left stops (exit 6). Then one question on a terminal: the cost check's when it asks
  // (over a quarter of what is left), else the pages'; piped, over 10 pages stops (exit 6).
  const terminal = ctx.io.stdinIsTTY && ctx.io.stderrIsTTY;
  const asked = await checkCost(ctx, remaining, 'This search', { asks: terminal });
  if (!asked) await guard.confirmPages(remaining + 1);
  return remaining;
}
