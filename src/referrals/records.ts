import { exampleOf } from '../api/endpoints/operations.js';
import { getReferralRecords, type RecordKind } from '../api/endpoints/referral-records.js';
import { defineCommand } from '../cli/define.js';
import { arg } from '../cli/options.js';
import { readList } from '../cli/read-list.js';
import { operationRoute, setCommand, unpublishedPathHint } from '../config/operations.js';
import type { Context } from '../context.js';
import { ApiError, notEnabledHint } from '../errors.js';
import type { FieldChoice } from '../output/fields.js';
import { write } from '../output/write.js';
import type { Resource } from '../resources/schema.js';
import { resolveReferral } from './resolve.js';

/** What differs between `referrals payments` and `referrals notifications`. */
interface RecordView<T> {
  kind: RecordKind;
  /** "payment read": the spec's name of the gated endpoint. */
  endpoint: string;
  resource: Resource<T>;
  description: string;
  examples: string[];
}

/** `referrals payments` or `referrals notifications`. */
export function recordsCommand<T>(view: RecordView<T>) {
  return defineCommand({
    path: ['referrals', view.kind],
    fields: [{ fields: view.resource.fields }],
    description: view.description,
    args: [arg('<id>', 'ID or reference')],
    examples: view.examples,
    run: (ctx, [id]) => showReferralRecords(ctx, id, view),
  });
}

/** One referral's payments or notifications: a table for people, every field in JSON, NDJSON and CSV. */
async function showReferralRecords<T>(ctx: Context, id: string, view: RecordView<T>): Promise<number> {
  const format = ctx.format('table');
  const { selectFields } = await import('../output/fields.js');
  const fields: FieldChoice = selectFields(ctx.globals.fields, view.resource.fields);
  const env = ctx.environment().value;
  // The stored path is checked before any request (a hand edit may have made it unsafe).
  operationRoute(ctx.config, env, view.kind, '-');
  const setIt = setCommand(view.kind, env);
  // An id in upper case is the same id: sent as the API stores it; a reference is looked up.
  const { id: rid } = await resolveReferral(ctx, id);
  const route = operationRoute(ctx.config, env, view.kind, rid);
  const configured = route.configured;
  const defaultNote = `the default, ${exampleOf(view.kind)}, is a guess`;
  let res: Awaited<ReturnType<typeof getReferralRecords>>;
  try {
    res = await getReferralRecords(ctx.api(), route.method, route.path);
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
        `Either there is no referral ${rid} on ${env}, or this server keeps ${view.kind} at another path: the API does not publish it, and ${configured ? `path.${view.kind} is set to ${configured}` : `the default is a guess (${exampleOf(view.kind)})`}. Check the id with: imaging referrals get ${rid}; set the path with: ${setIt}`,
      );
    if (err instanceof ApiError && err.status === 405)
      throw new ApiError(err.details, unpublishedPathHint(route));
    throw err;
  }
  const records = readList<T>(
    res,
    view.kind,
    format,
    view.resource.text,
    `If this server keeps ${view.kind} at another path (${configured ? `path.${view.kind} is set to ${configured}` : defaultNote}), set it: ${setIt}`,
  );
  await write(records, {
    sink: ctx.sink(),
    format,
    fields,
    columns: view.resource.columns,
    emptyHint: `No ${view.kind} for referral ${rid}.`,
  });
  return 0;
}
