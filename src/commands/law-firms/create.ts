import { createLawFirm, type NewLawFirm } from '../../api/endpoints/law-firms.js';
import { expectTexts, kindOf, readingAnswer } from '../../api/shape.js';
import type { LawFirm } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { text } from '../../cli/options.js';
import { ExitCode, UnreadableAnswerError, UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { write } from '../../output/write.js';
import { checkAskable, confirmWrite } from '../../referrals/confirm.js';
import { LAW_FIRM_FIELDS, LAW_FIRM_TEXT, lawFirmFields } from '../../resources/law-firms.js';

export default defineCommand({
  path: ['law-firms', 'create'],
  fields: [{ fields: LAW_FIRM_FIELDS }],
  description:
    'Requests a new law firm; it stays pending until the service approves it. In production it asks first (--yes to confirm without a terminal).',
  options: {
    name: text('--name <name>', 'firm name', { required: true }),
    city: text('--city <city>', 'city', { required: true }),
    state: text('--state <st>', 'two-letter state abbreviation', { required: true }),
    addressLine1: text('--address-line-1 <text>', 'street address'),
    addressLine2: text('--address-line-2 <text>', 'suite, floor'),
    zipcode: text('--zipcode <zip>', 'ZIP code'),
  },
  async run(ctx, _args, opts) {
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
    const lawFirm: NewLawFirm = { name, city, state };
    if (opts.addressLine1 !== undefined) lawFirm.address_line_1 = opts.addressLine1.trim();
    if (opts.addressLine2 !== undefined) lawFirm.address_line_2 = opts.addressLine2.trim();
    if (opts.zipcode !== undefined) lawFirm.zipcode = opts.zipcode.trim();
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, LAW_FIRM_FIELDS);
    checkAskable(ctx, 'creating a law firm');
    const client = ctx.api();
    if (!(await confirmWrite(ctx, `Create the law firm ${JSON.stringify(name)} (${city}, ${state})`)))
      return ExitCode.failure;
    const res = await createLawFirm(client, lawFirm);
    const data = res.data as Record<string, unknown> | null;
    // `{ law_firm: … }` as documented, or the firm itself.
    const wrapped = typeof data === 'object' && data !== null && !Array.isArray(data) && 'law_firm' in data;
    const firm = (wrapped ? data.law_firm : data) as LawFirm;
    if (format === 'table' || format === 'csv')
      readingAnswer(res.requestId, () => {
        if (typeof firm !== 'object' || firm === null || Array.isArray(firm))
          throw new UnreadableAnswerError(`the created law firm is ${kindOf(firm)}, not an object`);
        expectTexts(firm as unknown as Record<string, unknown>, 'the created law firm', LAW_FIRM_TEXT);
      });
    await write({ one: firm }, { sink: ctx.sink(), format, pairs: lawFirmFields, fields });
    if (format === 'table') ctx.note('Law firm requested: it stays pending until the service approves it.');
    return 0;
  },
});
