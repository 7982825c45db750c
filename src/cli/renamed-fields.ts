import type { Context } from '../context.js';
import { type FieldChoice, selectFields } from '../output/fields.js';
import type { OutputFormat } from '../output/format.js';
import { REFERRAL_COMPUTED, REFERRAL_LIST_FIELDS, RENAMED_COLUMNS } from '../resources/referrals.js';

/**
 * --fields as given, with the referral columns' old names taken, for now, as the new ones, with one line
 * on stderr, so a script keeps working while it is changed.
 */
export function renamedFields(ctx: Context, documented: readonly string[]): string | undefined {
  const value = ctx.globals.fields;
  if (value === undefined) return value;
  return value
    .split(',')
    .map((part) => {
      const name = part.trim();
      const now = Object.hasOwn(RENAMED_COLUMNS, name) ? RENAMED_COLUMNS[name] : undefined;
      if (!now || !documented.includes(now)) return part;
      ctx.note(
        `Note: --fields ${name} is now ${now}; the old name will stop being accepted in a later release`,
      );
      return now;
    })
    .join(',');
}

/** The fields of the referral list's views (`referrals list`, `referrals find`). */
export function referralListFields(ctx: Context, format: OutputFormat): FieldChoice {
  return selectFields(renamedFields(ctx, REFERRAL_LIST_FIELDS), REFERRAL_LIST_FIELDS, {
    computed: REFERRAL_COMPUTED,
    format,
  });
}
