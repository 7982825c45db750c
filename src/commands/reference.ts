import { checkListItems, expectTexts, kindOf, readingAnswer } from '../api/shape.js';
import type { BodyPart, CptMapping, Icd10Code, Modality } from '../api/types.js';
import type { Context, GlobalOptions } from '../context.js';
import { UnreadableAnswerError, UsageError } from '../errors.js';
import { renderList } from '../output/render.js';
import { isUuid } from '../util/args.js';
import { listCommand } from './list.js';

export async function modalities(ctx: Context): Promise<number> {
  const format = ctx.format('table');
  const res = await ctx.api().request<Modality[]>({ path: '/modalities' });
  await renderList(ctx, asArray<Modality>(res, 'modalities', format, ['name', 'slug', 'id']), {
    format,
    columns: [
      { header: 'Name', get: (m) => m.name },
      { header: 'Slug', get: (m) => m.slug },
      { header: 'ID', get: (m) => m.id },
    ],
    emptyHint: 'No modalities were returned.',
  });
  return 0;
}

export async function bodyParts(ctx: Context, opts: GlobalOptions & { modality?: string }): Promise<number> {
  const format = ctx.format('table');
  const modality = opts.modality?.trim();
  if (opts.modality !== undefined && !modality) throw new UsageError('--modality needs a name or an id');
  const res = await ctx.api().request<BodyPart[]>({ path: '/body_parts', query: { modality } });
  await renderList(ctx, asArray<BodyPart>(res, 'body parts', format, ['name', 'slug', 'laterality', 'id']), {
    format,
    columns: [
      { header: 'Name', get: (b) => b.name },
      { header: 'Slug', get: (b) => b.slug },
      {
        header: 'Laterality',
        get: (b) => (b.laterality === true ? 'yes' : b.laterality === false ? 'no' : b.laterality),
      },
      { header: 'ID', get: (b) => b.id },
    ],
    emptyHint: modality
      ? `No body parts for modality "${modality}" (see: imaging modalities).`
      : 'No body parts were returned.',
  });
  return 0;
}

const CPT_TEXT = [
  'code',
  'modality_name',
  'body_part_name',
  'contrast',
  'laterality',
  'modifier_name',
  'number_of_views',
  'id',
];

/** CPT codes are five characters: five digits (Category I) or four digits and F or T (Categories II, III). */
const CPT_RE = /^\d{4}[0-9FT]$/;

export async function cpt(ctx: Context, code: string): Promise<number> {
  const c = code.trim().toUpperCase();
  if (!CPT_RE.test(c)) {
    throw new UsageError(
      `"${code}" is not a CPT code`,
      'A CPT code is five characters, e.g. 73721 or 0042T.',
    );
  }
  const format = ctx.format('table');
  const res = await ctx.api().request<CptMapping[]>({ path: '/cpt_codes', query: { code: c } });
  await renderList(ctx, asArray<CptMapping>(res, 'CPT mappings', format, CPT_TEXT), {
    format,
    columns: [
      { header: 'Code', get: (m) => m.code },
      { header: 'Modality', get: (m) => m.modality_name },
      { header: 'Body part', get: (m) => m.body_part_name },
      { header: 'Contrast', get: (m) => m.contrast },
      { header: 'Laterality', get: (m) => m.laterality },
      { header: 'Modifier', get: (m) => m.modifier_name },
      { header: 'Views', get: (m) => m.number_of_views },
      { header: 'ID', get: (m) => m.id },
    ],
    emptyHint: `No procedure mappings for CPT code ${c}.`,
  });
  return 0;
}

export async function icd10(
  ctx: Context,
  query: string | undefined,
  opts: GlobalOptions & { ids?: string; page?: number; perPage?: number; all?: boolean },
): Promise<number> {
  const ids = opts.ids === undefined ? undefined : splitIds(opts.ids);
  if (opts.all && opts.page !== undefined) throw new UsageError('--all and --page cannot be used together');
  return listCommand<Icd10Code>(ctx, {
    path: '/icd10_codes',
    key: 'icd10_codes',
    query: { q: query?.trim() || undefined, ids },
    page: opts.page,
    perPage: opts.perPage,
    all: opts.all,
    noun: 'ICD-10 codes',
    check: (x, i) =>
      expectTexts(x as Record<string, unknown>, `ICD-10 codes: item ${i + 1}`, [
        'code',
        'short_description',
        'id',
      ]),
    columns: [
      { header: 'Code', get: (x) => x.code },
      { header: 'Description', get: (x) => x.short_description },
      { header: 'ID', get: (x) => x.id },
    ],
    emptyHint: query ? `No ICD-10 codes match "${query}".` : 'No ICD-10 codes were returned.',
  });
}

function splitIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (ids.length === 0) throw new UsageError('--ids needs at least one id');
  const bad = ids.filter((id) => !isUuid(id));
  if (bad.length > 0) throw new UsageError(`--ids: not a UUID: ${bad.join(', ')}`);
  return ids;
}

/**
 * The reference endpoints answer with an array; tolerate a wrapped one (`{ modalities: [...] }`).
 * Anything else is an answer this tool cannot read (not "nothing was returned"); for a table or
 * CSV each item must be an object, while JSON and NDJSON print the items as sent.
 */
function asArray<T>(
  res: { data: unknown; requestId: string | undefined },
  noun: string,
  format: string,
  textFields: readonly string[],
): T[] {
  return readingAnswer(res.requestId, () => {
    const data = res.data;
    let items: unknown[] | undefined;
    if (Array.isArray(data)) items = data;
    else if (typeof data === 'object' && data !== null) {
      const arrays = Object.values(data).filter(Array.isArray);
      if (arrays.length === 1) items = arrays[0];
    }
    if (!items) throw new UnreadableAnswerError(`the ${noun} answer is ${kindOf(data)}, not a list`);
    if (format === 'table' || format === 'csv') checkListItems(items, noun);
    if (format === 'table')
      for (const [i, item] of items.entries())
        expectTexts(item as Record<string, unknown>, `${noun}: item ${i + 1}`, textFields);
    return items as T[];
  });
}
