import { expectTexts, kindOf, readingAnswer } from '../api/shape.js';
import type { LawFirm } from '../api/types.js';
import type { Context, GlobalOptions } from '../context.js';
import { UnreadableAnswerError, UsageError } from '../errors.js';
import { type Column, renderOne } from '../output/render.js';
import { listCommand } from './list.js';

const columns: Column<LawFirm>[] = [
  { header: 'Name', get: (f) => f.name },
  { header: 'City', get: (f) => f.city },
  { header: 'State', get: (f) => f.state },
  { header: 'Zip', get: (f) => f.zipcode },
  { header: 'Address', get: (f) => [f.address_line_1, f.address_line_2].filter(Boolean).join(', ') },
  { header: 'ID', get: (f) => f.id },
];

const FIRM_TEXT = ['name', 'city', 'state', 'zipcode', 'address_line_1', 'address_line_2', 'id'];

export async function search(
  ctx: Context,
  query: string,
  opts: GlobalOptions & { page?: number; perPage?: number; all?: boolean },
): Promise<number> {
  const q = query.trim();
  if (q === '') throw new UsageError('the search query is empty');
  if (opts.all && opts.page !== undefined) throw new UsageError('--all and --page cannot be used together');
  return listCommand<LawFirm>(ctx, {
    path: '/law_firms',
    key: 'law_firms',
    query: { q },
    page: opts.page,
    perPage: opts.perPage,
    all: opts.all,
    noun: 'law firms',
    check: (f, i) => expectTexts(f as Record<string, unknown>, `law firms: item ${i + 1}`, FIRM_TEXT),
    columns,
    emptyHint: `No law firms match "${q}". To request a new one: imaging law-firms create --name … --city … --state …`,
  });
}

export interface CreateOpts extends GlobalOptions {
  name: string;
  city: string;
  state: string;
  addressLine1?: string;
  addressLine2?: string;
  zipcode?: string;
}

export async function create(ctx: Context, opts: CreateOpts): Promise<number> {
  const name = opts.name.trim();
  const city = opts.city.trim();
  const state = opts.state.trim().toUpperCase();
  if (name === '') throw new UsageError('--name is empty');
  if (city === '') throw new UsageError('--city is empty');
  if (!/^[A-Z]{2}$/.test(state))
    throw new UsageError(`--state must be a two-letter abbreviation, not "${opts.state}"`);
  if (opts.zipcode !== undefined && !/^\d{5}(-\d{4})?$/.test(opts.zipcode.trim())) {
    throw new UsageError(`--zipcode must be 12345 or 12345-6789, not "${opts.zipcode}"`);
  }
  const lawFirm: Record<string, string> = { name, city, state };
  if (opts.addressLine1 !== undefined) lawFirm.address_line_1 = opts.addressLine1.trim();
  if (opts.addressLine2 !== undefined) lawFirm.address_line_2 = opts.addressLine2.trim();
  if (opts.zipcode !== undefined) lawFirm.zipcode = opts.zipcode.trim();
  const format = ctx.format('table');
  const res = await ctx.api().request<{ law_firm?: LawFirm } | LawFirm>({
    method: 'POST',
    path: '/law_firms',
    json: { law_firm: lawFirm },
  });
  const data = res.data as Record<string, unknown> | null;
  // `{ law_firm: … }` as documented, or the firm itself; a law_firm member of the wrong kind is
  // not read as a firm with no fields.
  const wrapped = typeof data === 'object' && data !== null && !Array.isArray(data) && 'law_firm' in data;
  const firm = (wrapped ? data.law_firm : data) as LawFirm;
  if (format === 'table' || format === 'csv')
    readingAnswer(res.requestId, () => {
      if (typeof firm !== 'object' || firm === null || Array.isArray(firm))
        throw new UnreadableAnswerError(`the created law firm is ${kindOf(firm)}, not an object`);
      expectTexts(firm as unknown as Record<string, unknown>, 'the created law firm', FIRM_TEXT);
    });
  await renderOne(ctx, firm, format, (f) => [
    ['Name', f.name],
    ['ID', f.id],
    ['Address', [f.address_line_1, f.address_line_2].filter(Boolean).join(', ')],
    ['City', f.city],
    ['State', f.state],
    ['Zip', f.zipcode],
  ]);
  if (format === 'table') ctx.note('Law firm requested: it stays pending until the service approves it.');
  return 0;
}
