import {
  checkRecordPath,
  DEFAULT_RECORD_PATHS,
  getReferralRecords,
  type RecordKind,
  recordPath,
} from '../api/endpoints/referral-records.js';
import { readList } from '../cli/read-list.js';
import type { Context } from '../context.js';
import { ApiError, notEnabledHint, UsageError } from '../errors.js';
import type { FieldChoice } from '../output/fields.js';
import { write } from '../output/write.js';
import type { Resource } from '../resources/schema.js';
import { resolveReferral } from './resolve.js';

/** What differs between `referrals payments` and `referrals notifications`. */
interface RecordView<T> {
  kind: RecordKind;
  /** "payment read": the spec's name of the gated endpoint. */
  endpoint: string;
  noun: string;
  resource: Resource<T>;
}

/** One referral's payments or notifications: a table for people, every field in JSON, NDJSON and CSV. */
export async function showReferralRecords<T>(ctx: Context, id: string, view: RecordView<T>): Promise<number> {
  const format = ctx.format('table');
  const { selectFields } = await import('../output/fields.js');
  const fields: FieldChoice = selectFields(ctx.globals.fields, view.resource.fields);
  const env = ctx.environment().value;
  const configured = ctx.config.environment(env).paths?.[view.kind];
  if (configured !== undefined) {
    try {
      checkRecordPath(view.kind, configured);
    } catch (err) {
      throw new UsageError(
        `the stored path.${view.kind} of ${env} is not usable: ${(err as Error).message}`,
        `Set it again: imaging config set path.${view.kind} '/api/v2/…/{id}/…'${env === 'sandbox' ? '' : ` --env ${env}`} (or config unset path.${view.kind} for the default)`,
      );
    }
  }
  // An id in upper case is the same id: sent as the API stores it; a reference is looked up.
  const { id: rid } = await resolveReferral(ctx, id);
  const path = recordPath(view.kind, rid, configured);
  const setIt = `imaging config set path.${view.kind} '/api/v2/…/{id}/…'${env === 'sandbox' ? '' : ` --env ${env}`}`;
  let res: Awaited<ReturnType<typeof getReferralRecords>>;
  try {
    res = await getReferralRecords(ctx.api(), path);
  } catch (err) {
    if (err instanceof ApiError && err.status === 403)
      throw new ApiError(
        err.details,
        notEnabledHint({
          what: `Reading a referral's ${view.kind} ("${view.endpoint}" in the API)`,
          name: view.endpoint,
          others: `${view.kind === 'payments' ? 'notification reads' : 'payment reads'}, auto-book and FHIR`,
          env,
        }),
      );
    if (err instanceof ApiError && err.status === 404)
      throw new ApiError(
        err.details,
        `Either there is no referral ${rid} on ${env}, or this server keeps ${view.kind} at another path: the API does not publish it, and ${configured ? `path.${view.kind} is set to ${configured}` : `the default is a guess (${DEFAULT_RECORD_PATHS[view.kind]})`}. Check the id with: imaging referrals get ${rid}; set the path with: ${setIt}`,
      );
    throw err;
  }
  const records = readList<T>(
    res,
    `${view.noun}`,
    format,
    view.resource.text,
    `If this server keeps ${view.kind} at another path (${configured ? `path.${view.kind} is set to ${configured}` : `the default, ${DEFAULT_RECORD_PATHS[view.kind]}, is a guess`}), set it: ${setIt}`,
  );
  await write(records, {
    sink: ctx.sink(),
    format,
    fields,
    columns: view.resource.columns,
    emptyHint: `No ${view.noun} for referral ${rid}.`,
  });
  return 0;
}
