import type { ApiResponse } from '../../api/client.js';
import { readingAnswer } from '../../api/shape.js';
import type { Referral } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { parseJsonInput, readInput } from '../../cli/input.js';
import { arg, file, flag, list, text } from '../../cli/options.js';
import { operationRoute, sendOperation } from '../../config/operations.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { OutputFormat } from '../../output/format.js';
import { clean, safe } from '../../output/text.js';
import { writeJson } from '../../output/write.js';
import { checkReferralStructure } from '../../referrals/check.js';
import { approveWrite, beginWrite } from '../../referrals/confirm.js';
import { fetchReferral } from '../../referrals/fetch.js';
import { resolveReferral } from '../../referrals/resolve.js';
import {
  type Change,
  changesBetween,
  fileFields,
  flagFields,
  type IcdChanges,
  lookUpIcd10,
  nextIcdIds,
  none,
  parseIcdChanges,
  referralKeyOf,
  shown,
  snapshotOf,
  type UpdateFlags,
} from '../../referrals/update.js';

const options = {
  wcNumber: text('--wc-number <value>', "workers' compensation board number ('' clears it)"),
  insuranceNumber: text('--insurance-number <value>', "member number ('' clears it)"),
  icd10: list(
    '--icd10 <changes>',
    'ICD-10 codes to add and remove: +ID,-ID, each an id or a code, checked to exist first (repeatable)',
  ),
  lawFirm: text('--law-firm <id>', 'the law firm id to assign'),
  practice: text('--practice <id>', 'the practice id to assign'),
  provider: text('--provider <id>', 'the referring provider id to assign'),
  file: file(
    '--file <file>',
    'other fields, a JSON object ({"referral": {…}} or the fields alone), or - for standard input',
  ),
  dryRun: flag('--dry-run', 'show the request and send no change (the referral is still read)'),
};

export default defineCommand({
  path: ['referrals', 'update'],
  formats: ['table', 'json'],
  description:
    "Sends { \"referral\": { … } } with only the fields given, and prints what changed: before from a read made first, after from the snapshot the update returns. The update's method, path and body are not published: the method and path default to PATCH /api/v2/referrals/{id} (set them per environment with imaging config set path.referral_update '[METHOD] /api/v2/…/{id}'), and the field names are a guess; --file sends any others. In production it asks first (--yes to confirm without a terminal).",
  args: [arg('<id>', 'ID or reference')],
  options,
  examples: [
    'imaging referrals update ID --wc-number WC-2026-0042',
    'imaging referrals update ID --icd10 +M54.50,+M54.2 --dry-run',
    'imaging referrals update ID --law-firm e00bbeb8-17b4-4d35-8a04-133f454cc24c --json',
  ],
  async run(ctx, [id], opts) {
    const format = ctx.format('table');
    const plan = await planOf(ctx, opts);
    const { env, client } = beginWrite(ctx, 'referral_update', 'updating a referral', {
      dryRun: opts.dryRun,
      stdinUsed: opts.file === '-',
    });
    const codes = await lookUpIcd10(ctx, plan.icd ? [...plan.icd.add, ...plan.icd.remove] : []);
    const { id: rid } = await resolveReferral(ctx, id);
    const before = await readReferral(ctx, rid);
    const fields = { ...plan.fields };
    if (plan.icd) fields.icd10_code_ids = nextIcdIds(before, plan.icd, codes);
    const body = { referral: fields };
    const route = operationRoute(ctx.config, env, 'referral_update', rid);
    const question = `Update referral ${clean(before.reference ?? rid)}`;
    const stop = await approveWrite(ctx, { format, route, body, dryRun: opts.dryRun }, question);
    if (stop !== undefined) return stop;
    const res = await sendOperation<unknown>(client, route, body, {
      found: `Referral ${clean(before.reference ?? rid)}`,
    });
    let after = snapshotOf(res.data);
    if (!after) {
      ctx.note('The update answered without the referral: reading it again to show what changed.');
      after = await readReferral(ctx, rid);
    }
    return showChanges(ctx, format, before, after, fields);
  },
});

interface Plan {
  fields: Record<string, unknown>;
  icd: IcdChanges | undefined;
}

/** Everything given, checked before any request: at least one change, ids that are ids, no field twice. */
async function planOf(ctx: Context, opts: UpdateFlags & { file?: string | undefined }): Promise<Plan> {
  const fields = flagFields(opts);
  const icd = opts.icd10 ? parseIcdChanges(opts.icd10) : undefined;
  if (icd && icd.add.length + icd.remove.length === 0) throw new UsageError('--icd10 names no code');
  if (opts.file !== undefined) {
    const source = opts.file === '-' ? 'standard input' : opts.file;
    const parsed = parseJsonInput(await readInput(ctx, opts.file, '--file'), source);
    const keys = [...Object.keys(fields), ...(icd ? ['icd10_code_ids'] : [])];
    Object.assign(fields, fileFields(parsed, source, keys));
  }
  if (Object.keys(fields).length === 0 && !icd)
    throw new UsageError(
      'nothing to update',
      'Give at least one of --wc-number, --insurance-number, --icd10, --law-firm, --practice, --provider or --file.',
    );
  return { fields, icd };
}

async function readReferral(ctx: Context, id: string): Promise<Referral> {
  const res: ApiResponse<Referral> = await fetchReferral(ctx, id);
  readingAnswer(res.requestId, () => checkReferralStructure(res.data, 'the referral'));
  return res.data;
}

/** What changed, field by field; a field asked for that the server left as it was is warned of. */
function showChanges(
  ctx: Context,
  format: OutputFormat,
  before: Referral,
  after: Referral,
  fields: Record<string, unknown>,
): number {
  const changes = changesBetween(before, after);
  const changed = new Set(changes.map((c) => c.field));
  const left = Object.keys(fields).filter(
    (k) => !changed.has(referralKeyOf(k)) && asked(before, k, fields[k]),
  );
  if (format === 'json') {
    const out = { id: after.id, reference: after.reference, changes, referral: after };
    writeJson(ctx.sink(), out);
  } else writeChanges(ctx, after, changes, left.length > 0);
  for (const k of left)
    ctx.note(
      `warning: ${k} was sent, but the referral the server returned shows ${referralKeyOf(k)} as before.`,
    );
  return 0;
}

/** `ignored`: a field sent was returned as before (warned of on stderr), so "already had" would be untrue. */
function writeChanges(ctx: Context, after: Referral, changes: Change[], ignored: boolean): void {
  const name = safe`${clean(after.reference ?? '')} (${clean(after.id)})`;
  if (changes.length === 0) {
    ctx.out.line(
      ignored
        ? safe`Nothing changed on referral ${name}: the server returned it as it was.`
        : safe`Nothing changed on referral ${name}: it already had these values.`,
    );
    return;
  }
  ctx.out.line(safe`Updated referral ${name}:`);
  const width = Math.max(...changes.map((c) => c.field.length));
  for (const c of changes)
    ctx.out.line(safe`  ${c.field.padEnd(width)}  ${shown(c.before)} \u2192 ${shown(c.after)}`);
}

/** Whether sending `value` for `key` meant a change from `before` (a value already there is no warning). */
function asked(before: Referral, key: string, value: unknown): boolean {
  const now = before[referralKeyOf(key)];
  if (key === 'icd10_code_ids')
    return JSON.stringify((Array.isArray(now) ? now : []).map((c) => c?.id)) !== JSON.stringify(value);
  if (key.endsWith('_id')) return (now as { id?: unknown } | null)?.id !== value;
  return JSON.stringify(none(now)) !== JSON.stringify(none(value));
}
