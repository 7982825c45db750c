import { accessSync, constants, existsSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { getReferral } from '../../api/endpoints/referrals.js';
import { readingAnswer } from '../../api/shape.js';
import type { Referral } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { arg, file, flag, folder, int, text } from '../../cli/options.js';
import { formatBytes } from '../../cli/stdin.js';
import type { Context } from '../../context.js';
import { ApiError, CliError, ExitCode, UnreadableAnswerError, UsageError } from '../../errors.js';
import { checkSaveFolder } from '../../export/output-file.js';
import { reasonOf } from '../../fs/write-file.js';
import { type FieldChoice, selectFields } from '../../output/fields.js';
import { safe } from '../../output/text.js';
import {
  checkDownloadable,
  NotSaved,
  type Saved,
  saveOne,
  type Wanted,
  wantedOf,
} from '../../referrals/download.js';
import { count, num } from '../../util/plural.js';

const DEFAULT_MAX = 100 * 1024 * 1024;
/** A file is held in memory whole before it is written: no more than one buffer safely holds. */
const MAX_MAX = 2 * 1024 ** 3;

/** Every key an item can have, in the order --json writes them. */
const ITEM_FIELDS = [
  'status',
  'referral_id',
  'reference',
  'referral',
  'kind',
  'accession',
  'document',
  'file',
  'path',
  'bytes',
  'content_type',
  'reason',
] as const;

export default defineCommand({
  path: ['referrals', 'download'],
  description:
    'Saves the report PDFs (the default; --documents: the documents that have a URL instead, both flags: both) into DIR, named <reference>_<accession>_report.pdf and <reference>_document-<n>.<ext> (each part from server text cut to 100 bytes; <ext> from the link when it is pdf, png, jpg, jpeg, gif, tif, tiff, txt, xml, json or dcm, else from the content type, else bin). Files are patient data: written 0600, whole or not at all, never cached; an existing file is left alone (exit 1) unless --force. Two files that would get one name in a run (references or accessions that differ only in case or in characters a file name cannot hold) never replace each other: the later gets -2, -3… before its extension. DIR must belong to you or root and not be writable by others unless sticky, as /tmp is (else exit 2). The token goes only to links below the base URL. A report not in yet is listed with its visit status. Referrals are read and files fetched --concurrency at a time, with a progress bar on a terminal. --json and --format ndjson list every item asked for with a status (saved, exists, failed, not_available, not_found) and, when not saved, its reason; never a URL. Among several referrals, one not found is a line and a failure. Exit 1 when any file was not saved, 4 when nothing asked for is available.',
  formats: ['table', 'json', 'ndjson'],
  // The items --json lists: --fields picks among them in every format (a table of them, else the lines).
  fields: [{ fields: ITEM_FIELDS }],
  csv: false,
  args: [arg('[ids...]', 'referral ids or references')],
  options: {
    from: file(
      '--from <file>',
      "also the referrals FILE names (- for stdin): an export (CSV, NDJSON, JSON) or one a line; a file of your own, not another user's file, FIFO or symlink",
    ),
    reports: flag('--reports', 'the report PDFs (the default)'),
    documents: flag('--documents', "the referral's documents that have a URL"),
    dir: folder(
      '-D, --dir <dir>',
      'the folder to save into (default: the current folder; made if missing); refused inside a folder another user controls',
    ),
    force: flag('--force', 'replace files that already exist'),
    maxSize: text('--max-size <size>', 'the largest file to save, e.g. 20MiB (default 100MiB, at most 2GiB)'),
    concurrency: int('--concurrency <n>', 'referrals read and files fetched at once (default 4)', {
      max: 16,
    }),
  },
  examples: [
    'imaging referrals download R-240002',
    'imaging referrals download R-240002 R-240007 --documents --reports -D case-files',
    'imaging referrals download --from case-referrals.txt -D case-files   # or an export',
  ],
  async run(ctx, [given], opts) {
    const ids = (given as unknown as string[] | undefined) ?? [];
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, ITEM_FIELDS, { extra: false });
    const maxBytes = opts.maxSize === undefined ? DEFAULT_MAX : parseSize(opts.maxSize);
    const dir = resolvePath(opts.dir ?? '.');
    const texts = [...ids, ...(opts.from === undefined ? [] : await fromFile(ctx, opts.from))];
    if (texts.length === 0)
      throw new UsageError(
        'name the referrals to download from: ids or references, or --from FILE',
        'e.g. imaging referrals download R-240002',
      );
    const makeDir = checkDir(dir, opts.dir !== undefined, opts.dir ?? '.');
    // In the sandbox, each referral costs at least one request: more than is left stops (exit 6) before any.
    ctx.api(); // the meter is the API client's
    const { checkCost } = await import('../../meter/cost.js');
    await checkCost(ctx, new Set(texts.map((t) => t.trim())).size, 'This download');
    const reports = opts.reports === true || opts.documents !== true;
    const documents = opts.documents === true;
    // The lines for people; --fields asks for the items, a table of the fields chosen.
    const human = format === 'table' && fields.chosen === undefined;
    const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
    const { ProgressBar } = await import('../../output/progress.js');
    const barOn = ctx.io.stderrIsTTY && human;

    // One bar from the start: the referrals read (a reference's lookup, or its own request).
    const unique = new Set(texts.map((t) => t.trim())).size;
    const reading = new ProgressBar(ctx.err, barOn, 'reading', ctx.io.errColumns ?? 80, {
      pages: 'referrals',
      records: 'read',
    });
    let readCount = 0;
    const tick = () => reading.update(++readCount, readCount, unique);
    reading.update(0, 0, unique);
    let named: Named[];
    let wantedOut: Awaited<ReturnType<typeof wantedAll>>;
    try {
      const { resolveReferrals } = await import('../../referrals/resolve.js');
      // One referral not found is the resolver's exit 4; among several, one line and a failure.
      const resolved = dedupe(
        await resolveReferrals(ctx, texts, { keepMissing: texts.length > 1, onLookup: tick }),
      );
      readCount = resolved.filter((n) => n.referral !== undefined || n.missing).length;
      reading.update(readCount, readCount, resolved.length);
      named = resolved;
      wantedOut = await wantedAll(ctx, named, reports, documents, concurrency, () =>
        reading.update(++readCount, readCount, named.length),
      );
    } finally {
      reading.done();
    }
    const { wanted, failures, unread, notFound, items } = wantedOut;
    listUnavailable(human ? ctx.out : ctx.err, wanted);
    const available = wanted.filter((w): w is Available => w.url !== null);
    if (available.length === 0) {
      if (!human) await writeItems(ctx, format, items, fields);
      nothingAvailable(named.length, wanted.length, notFound, unread, reports, documents, waitFor(wanted));
    }
    const saveDir = makeDir();
    const saved = await saveAll(ctx, available, {
      dir: saveDir,
      force: opts.force === true,
      maxBytes,
      human,
      failures,
      concurrency,
      bar: new ProgressBar(ctx.err, barOn, 'downloading', ctx.io.errColumns ?? 80, {
        pages: 'files',
        records: 'bytes',
      }),
      items,
    });
    if (!human) await writeItems(ctx, format, items, fields);
    if (failures.length > 0) throw new CliError(notSaved(failures.length, notFound, unread, saved));
    return 0;
  },
});

type Available = Wanted & { url: string };
type Named = {
  id: string;
  reference?: string | undefined;
  referral?: Referral | undefined;
  missing?: true | undefined;
};

const DEFAULT_CONCURRENCY = 4;

/**
 * One line of --json / ndjson: every item asked for, with what became of it (and why not); never a
 * URL, as a link's signature lets anyone holding it read the file.
 */
type Item = Record<string, unknown> & {
  status: 'saved' | 'exists' | 'failed' | 'not_available' | 'not_found';
};

/** A reason without a link in it: a signed URL is a credential. */
const noUrl = (text: string) => text.replace(/\bhttps?:\/\/\S*[^\s;,.)]/gi, 'the link');

async function writeItems(
  ctx: Context,
  format: string,
  items: Array<Item | undefined>,
  fields: FieldChoice,
): Promise<void> {
  const { write } = await import('../../output/write.js');
  await write(
    items.filter((i): i is Item => i !== undefined),
    { format: format as 'json', sink: ctx.sink(), fields },
  );
}

function itemOf(w: Wanted): Record<string, unknown> {
  return {
    referral_id: w.referralId,
    reference: w.reference,
    kind: w.kind,
    ...(w.kind === 'report' ? { accession: w.accession ?? null } : { document: w.number ?? 0 }),
  };
}

/** What each referral offers, `concurrency` read at once; with several, one not found is a line and a failure. */
async function wantedAll(
  ctx: Context,
  named: readonly Named[],
  reports: boolean,
  documents: boolean,
  concurrency: number,
  onRead: () => void,
) {
  const client = ctx.api();
  const read: Array<Referral | undefined> = new Array(named.length);
  const unreadable: Array<UnreadableAnswerError | undefined> = new Array(named.length);
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < named.length) {
      const i = next++;
      const n = named[i]!;
      if (n.missing) continue;
      // A reference's list record is the referral already: no second request.
      if (n.referral) {
        try {
          read[i] = readingAnswer(undefined, () => checkDownloadable(n.referral));
        } catch (err) {
          if (named.length > 1 && err instanceof UnreadableAnswerError) unreadable[i] = err;
          else throw err;
        }
        continue;
      }
      try {
        const res = await getReferral(client, n.id);
        read[i] = readingAnswer(res.requestId, () => checkDownloadable(res.data));
      } catch (err) {
        if (named.length > 1 && err instanceof UnreadableAnswerError) {
          unreadable[i] = err;
          continue;
        }
        if (named.length === 1 || !(err instanceof ApiError) || err.exitCode !== ExitCode.notFound) {
          stopped = true;
          throw err;
        }
      } finally {
        onRead();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, named.length) }, worker));
  const failures: string[] = [];
  const wanted: Wanted[] = [];
  const items: Array<Item | undefined> = [];
  let notFound = 0;
  for (const [i, referral] of read.entries()) {
    const n = named[i]!;
    const who = n.reference ?? n.id;
    if (referral) {
      for (const w of wantedOf(referral, reports, documents)) {
        wanted.push(w);
        items.push(
          w.url === null
            ? { status: 'not_available', ...itemOf(w), reason: unavailableReason(w) }
            : undefined,
        );
      }
      continue;
    }
    const bad = unreadable[i];
    if (bad) {
      failures.push(`${who}: ${bad.message}`);
      items.push({ status: 'failed', referral: who, reason: noUrl(bad.message) });
      ctx.err.line(
        safe`error: ${who}: ${bad.message}${bad.requestId ? ` (request id ${bad.requestId})` : ''}`,
      );
      continue;
    }
    notFound++;
    failures.push(`${who}: not found`);
    items.push({ status: 'not_found', referral: who, reason: 'referral not found' });
    ctx.err.line(safe`error: ${who}: referral not found`);
  }
  return { wanted, failures, unread: unreadable.filter(Boolean).length, notFound, items };
}

/** What failed, by kind: a referral not found or not readable is not a file not saved. */
function notSaved(failures: number, notFound: number, unread: number, saved: number): string {
  const files = failures - notFound - unread;
  if (notFound + unread === 0) return `${count(files, 'file')} not saved (${num(saved)} saved)`;
  const parts = [
    notFound > 0 ? `${count(notFound, 'referral')} not found` : '',
    unread > 0 ? `${count(unread, 'referral')} not readable` : '',
    files > 0 ? `${count(files, 'file')} not saved` : '',
  ].filter(Boolean);
  return `${parts.join(', ')} (${count(saved, 'file')} saved)`;
}

/** The watch command for the referrals whose reports are not in: by reference when a shell reads it as one word. */
function waitFor(wanted: readonly Wanted[]): string {
  const names = [
    ...new Set(
      wanted
        .filter((w) => w.url === null)
        .map((w) => (w.reference && /^[\w.-]+$/.test(w.reference) ? w.reference : w.referralId)),
    ),
  ];
  const shown = names.length > 3 ? [...names.slice(0, 3), '…'] : names;
  return `imaging referrals watch ${shown.join(' ') || 'ID'}`;
}

function unavailableReason(w: Wanted): string {
  const status = w.visitStatus ?? 'status unknown';
  return status === 'canceled'
    ? 'no report, visit canceled'
    : status === 'exam_not_completed'
      ? 'no report, exam not completed'
      : `not available yet (${status})`;
}

/** Reports not in yet: in the list a person reads, or on stderr beside data. */
function listUnavailable(to: Context['out'], wanted: readonly Wanted[]): void {
  const lines = new Set<string>();
  for (const w of wanted) if (w.url === null) lines.add(`${w.label}: ${unavailableReason(w)}`);
  for (const line of lines) to.line(safe`${line}`);
}

/** Exit 4 when nothing asked for is available (not found, or no report in); 1 when a referral was unreadable. */
function nothingAvailable(
  referrals: number,
  wanted: number,
  notFound: number,
  unread: number,
  reports: boolean,
  documents: boolean,
  watch: string,
): never {
  const what = !documents ? 'report' : !reports ? 'document with a URL' : 'report or document';
  const parts = [
    notFound > 0 ? `${count(notFound, 'referral')} not found` : '',
    unread > 0 ? `${count(unread, 'referral')} not readable` : '',
    notFound + unread < referrals
      ? `${wanted === 0 ? `no ${what}` : 'no report is in yet'} for ${count(referrals - notFound - unread, 'referral')}`
      : '',
  ].filter(Boolean);
  if (unread > 0) throw new CliError(`${parts.join(', ')}; nothing saved`);
  throw new CliError(
    notFound > 0 ? `nothing to download: ${parts.join(', ')}` : `nothing to download: ${parts[0]}`,
    ExitCode.notFound,
    wanted > 0 ? `Wait until the visit reaches report_uploaded: ${watch}` : undefined,
  );
}

/**
 * The files, `concurrency` fetched at once, each named, written and reported in the order asked:
 * one line for each saved or not (the reason), one progress bar on a terminal for the run.
 */
async function saveAll(
  ctx: Context,
  available: readonly Available[],
  opts: {
    dir: string;
    force: boolean;
    maxBytes: number;
    human: boolean;
    failures: string[];
    concurrency: number;
    bar: import('../../output/progress.js').ProgressBar;
    items: Array<Item | undefined>;
  },
): Promise<number> {
  const client = ctx.api();
  const bar = opts.bar;
  bar.update(0, 0, available.length);
  const taken = new Set<string>();
  // Where each available file's line goes among the items (the unavailable ones hold theirs).
  const slots = opts.items.flatMap((item, k) => (item === undefined ? [k] : []));
  let done = 0;
  let bytes = 0;
  const receiving = new Map<number, number>();
  const draw = () => {
    let inFlight = 0;
    for (const r of receiving.values()) inFlight += r;
    bar.update(done, bytes + inFlight, available.length);
  };
  const turns: Array<Promise<void>> = [];
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < available.length) {
      const i = next++;
      const w = available[i]!;
      const turn = turns[i - 1] ?? Promise.resolve();
      let release!: () => void;
      turns[i] = new Promise((r) => (release = r));
      let outcome: Outcome;
      try {
        outcome = {
          saved: await saveOne(client, w, {
            ...opts,
            taken,
            turn,
            onData: (received) => {
              receiving.set(i, received);
              draw();
            },
          }),
        };
      } catch (error) {
        outcome = { error };
      }
      // The lines come in the order asked, whichever file arrived first.
      await turn;
      receiving.delete(i);
      done++;
      try {
        bytes += report(ctx, w, outcome, slots[i]!, opts)?.bytes ?? 0;
        draw();
      } catch (err) {
        stopped = true;
        throw err;
      } finally {
        release();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, available.length) }, worker));
  } finally {
    bar.done();
  }
  return opts.items.filter((item) => item?.status === 'saved').length;
}

type Outcome = { saved: Saved } | { error: unknown };

/** One file's line (saved, or why not) and its item for --json; an error that is no NotSaved is thrown. */
function report(
  ctx: Context,
  w: Available,
  outcome: Outcome,
  slot: number,
  opts: { human: boolean; failures: string[]; items: Array<Item | undefined>; bar: { clear(): void } },
): Saved | undefined {
  if ('saved' in outcome) {
    const s = outcome.saved;
    opts.items[slot] = { status: 'saved', ...s };
    opts.bar.clear();
    if (opts.human) ctx.out.line(safe`saved ${s.file} (${formatBytes(s.bytes)})`);
    return s;
  }
  const err = outcome.error;
  if (!(err instanceof NotSaved)) throw err;
  opts.failures.push(err.message);
  opts.items[slot] = { status: err.status, ...itemOf(w), reason: noUrl(err.message) };
  opts.bar.clear();
  ctx.err.line(err.status === 'exists' ? err.message : safe`error: ${w.label}: ${err.message}`);
  return undefined;
}

/** `100MiB`, `20MB`, `512k`, `1048576`: a size in bytes (KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024). */
export function parseSize(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(i?)b?\s*$/i.exec(value);
  if (!m) throw new UsageError(`--max-size must be a size such as 20MiB or 500KB, not "${value}"`);
  const power = ' kmg'.indexOf((m[2] || ' ').toLowerCase());
  const n = Math.floor(Number(m[1]) * (m[3] ? 1024 : 1000) ** power);
  if (n < 1) throw new UsageError('--max-size must be at least 1 byte');
  if (n > MAX_MAX)
    throw new UsageError(
      `--max-size can be at most 2GiB, not "${value}": a file is held in memory whole before it is saved`,
    );
  return n;
}

async function fromFile(ctx: Context, source: string): Promise<string[]> {
  const { readInput } = await import('../../cli/input.js');
  const { referralsInFile } = await import('../../referrals/from-file.js');
  const bytes = await readInput(ctx, source, '--from');
  return referralsInFile(bytes.toString('utf8'), source === '-' ? 'standard input' : source);
}

/**
 * The folder is a folder, or is missing and named with -D: made (0700: it holds patient data) only
 * once there is something to save in it. The function given back makes it if need be and returns
 * the real path files are written under (the checked one, not the path as typed).
 */
function checkDir(dir: string, named: boolean, given: string): () => string {
  try {
    if (!statSync(dir).isDirectory()) throw new UsageError(`--dir: ${dir} is not a folder`);
    writable(
      dir,
      named ? `--dir: cannot save in ${dir}` : `cannot save in the current folder (${dir})`,
      named,
    );
    const real = checkSaveFolder(dir, given);
    return () => real;
  } catch (err) {
    if (err instanceof CliError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !named)
      throw new UsageError(`--dir: cannot use ${dir}: ${reasonOf(err)}`);
  }
  // The folder it would be made in passes the same checks now, before any request; a level that is a
  // symbolic link to nothing could never be made.
  const missing: string[] = [];
  let parent = dir;
  while (parent !== dirname(parent) && !existsSync(parent)) {
    if (lstatSync(parent, { throwIfNoEntry: false })?.isSymbolicLink())
      throw new UsageError(`--dir: ${parent} is a symbolic link to a folder that does not exist`);
    missing.unshift(parent);
    parent = dirname(parent);
  }
  if (!statSync(parent).isDirectory()) throw new UsageError(`--dir: ${parent} is not a folder`);
  writable(parent, `--dir: cannot make a folder in ${parent}`);
  checkSaveFolder(parent, given);
  return () => {
    // One level at a time: Node's recursive mkdir never returns on a file system that answers ENOENT
    // to a mkdir whose parent exists (/proc).
    for (const level of missing) {
      try {
        mkdirSync(level, { mode: 0o700 });
      } catch (err) {
        if (
          (err as NodeJS.ErrnoException).code !== 'EEXIST' ||
          !statSync(level, { throwIfNoEntry: false })?.isDirectory()
        )
          throw new CliError(`--dir: cannot make ${level}: ${reasonOf(err)}`);
      }
    }
    return checkSaveFolder(dir, given);
  };
}

/** A folder this user cannot write to is refused before any request, not after every file is read. */
function writable(dir: string, what: string, named = true): void {
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new UsageError(
      `${what}: ${reasonOf(err)}`,
      named ? undefined : 'Give a folder to save into: -D DIR.',
    );
  }
}

function dedupe<T extends { id: string }>(list: readonly T[]): T[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.id) && seen.add(x.id));
}
