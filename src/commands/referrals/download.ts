import { mkdirSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { getReferral } from '../../api/endpoints/referrals.js';
import { readingAnswer } from '../../api/shape.js';
import type { Referral } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { arg, file, flag, text } from '../../cli/options.js';
import { formatBytes } from '../../cli/stdin.js';
import type { Context } from '../../context.js';
import { ApiError, CliError, ExitCode, UnreadableAnswerError, UsageError } from '../../errors.js';
import { checkSaveFolder } from '../../export/output-file.js';
import { reasonOf } from '../../fs/write-file.js';
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

export default defineCommand({
  path: ['referrals', 'download'],
  description:
    'Saves the report PDFs (the default; --documents: the documents that have a URL instead, both flags: both) into DIR, named <reference>_<accession>_report.pdf and <reference>_document-<n>.<ext>. Files are patient data: written 0600, whole or not at all, never cached; an existing file is left alone (exit 1) unless --force. Two files that would get one name in a run (references or accessions that differ only in characters a file name cannot hold) never replace each other: the later gets -2, -3… before its extension. DIR must belong to you or root and not be writable by others unless sticky, as /tmp is (else exit 2). The token goes only to links below the base URL. A report not in yet is listed with its visit status. Exit 1 when any file was not saved, 4 when nothing asked for is available.',
  formats: ['table', 'json', 'ndjson'],
  args: [arg('[ids...]', 'referral ids or references')],
  options: {
    from: file(
      '--from <file>',
      'also the referrals FILE names (- for stdin): an export (CSV, NDJSON, JSON) or one a line',
    ),
    reports: flag('--reports', 'the report PDFs (the default)'),
    documents: flag('--documents', "the referral's documents that have a URL"),
    dir: file('-D, --dir <dir>', 'the folder to save into (default: the current folder; made if missing)'),
    force: flag('--force', 'replace files that already exist'),
    maxSize: text('--max-size <size>', 'the largest file to save, e.g. 20MiB (default 100MiB, at most 2GiB)'),
  },
  examples: [
    'imaging referrals download R-240002',
    'imaging referrals download R-240002 R-240007 --documents --reports -D case-files',
    'imaging referrals download --from case-referrals.txt -D case-files   # or an export',
  ],
  async run(ctx, [given], opts) {
    const ids = (given as unknown as string[] | undefined) ?? [];
    const format = ctx.format('table');
    const maxBytes = opts.maxSize === undefined ? DEFAULT_MAX : parseSize(opts.maxSize);
    const dir = resolvePath(opts.dir ?? '.');
    const texts = [...ids, ...(opts.from === undefined ? [] : await fromFile(ctx, opts.from))];
    if (texts.length === 0)
      throw new UsageError(
        'name the referrals to download from: ids or references, or --from FILE',
        'e.g. imaging referrals download R-240002',
      );
    const makeDir = checkDir(dir, opts.dir !== undefined, opts.dir ?? '.');
    const reports = opts.reports === true || opts.documents !== true;
    const documents = opts.documents === true;
    const human = format === 'table';

    const { resolveReferrals } = await import('../../referrals/resolve.js');
    const named = dedupe(await resolveReferrals(ctx, texts));
    const { wanted, failures, unread } = await wantedAll(ctx, named, reports, documents);
    listUnavailable(human ? ctx.out : ctx.err, wanted);
    const available = wanted.filter((w): w is Available => w.url !== null);
    if (available.length === 0)
      nothingAvailable(named.length, wanted.length, failures.length - unread, unread, reports, documents);
    makeDir();
    const saved = await saveAll(ctx, available, {
      dir,
      force: opts.force === true,
      maxBytes,
      human,
      failures,
    });
    if (!human) {
      const { write } = await import('../../output/write.js');
      await write(saved, { format, sink: ctx.sink() });
    }
    if (failures.length > 0)
      throw new CliError(`${count(failures.length, 'file')} not saved (${num(saved.length)} saved)`);
    return 0;
  },
});

type Available = Wanted & { url: string };
type Named = { id: string; reference?: string | undefined; referral?: Referral | undefined };

/** Referrals read at once: many arguments or a long --from list are read a few at a time. */
const CONCURRENCY = 4;

/** What each referral offers; with several referrals, one not found is a line and a failure. */
async function wantedAll(ctx: Context, named: readonly Named[], reports: boolean, documents: boolean) {
  const client = ctx.api();
  const read: Array<Referral | undefined> = new Array(named.length);
  const unreadable: Array<UnreadableAnswerError | undefined> = new Array(named.length);
  let next = 0;
  const worker = async () => {
    while (next < named.length) {
      const i = next++;
      const n = named[i]!;
      try {
        // A reference's list record is the referral already: no second request.
        const res = n.referral ? { data: n.referral, requestId: undefined } : await getReferral(client, n.id);
        read[i] = readingAnswer(res.requestId, () => checkDownloadable(res.data));
      } catch (err) {
        if (named.length > 1 && err instanceof UnreadableAnswerError) {
          unreadable[i] = err;
          continue;
        }
        if (named.length === 1 || !(err instanceof ApiError) || err.exitCode !== ExitCode.notFound) throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, named.length) }, worker));
  const failures: string[] = [];
  const wanted: Wanted[] = [];
  for (const [i, referral] of read.entries()) {
    if (referral) {
      wanted.push(...wantedOf(referral, reports, documents));
      continue;
    }
    const n = named[i]!;
    const bad = unreadable[i];
    if (bad) {
      failures.push(`${n.reference ?? n.id}: ${bad.message}`);
      ctx.err.line(
        safe`error: ${n.reference ?? n.id}: ${bad.message}${bad.requestId ? ` (request id ${bad.requestId})` : ''}`,
      );
      continue;
    }
    failures.push(`${n.reference ?? n.id}: not found`);
    ctx.err.line(safe`error: ${n.reference ?? n.id}: referral not found`);
  }
  return { wanted, failures, unread: unreadable.filter(Boolean).length };
}

/** Reports not in yet: in the list a person reads, or on stderr beside data. */
function listUnavailable(to: Context['out'], wanted: readonly Wanted[]): void {
  const lines = new Set<string>();
  for (const w of wanted) {
    if (w.url !== null) continue;
    const status = w.visitStatus ?? 'status unknown';
    lines.add(
      status === 'canceled'
        ? `${w.label}: no report, visit canceled`
        : status === 'exam_not_completed'
          ? `${w.label}: no report, exam not completed`
          : `${w.label}: not available yet (${status})`,
    );
  }
  for (const line of lines) to.line(safe`${line}`);
}

function nothingAvailable(
  referrals: number,
  wanted: number,
  notFound: number,
  unread: number,
  reports: boolean,
  documents: boolean,
): never {
  if (notFound + unread > 0)
    throw new CliError(
      [
        notFound > 0 ? `${count(notFound, 'referral')} not found` : '',
        unread > 0 ? `${count(unread, 'referral')} not readable` : '',
      ]
        .filter(Boolean)
        .join(', ') + '; nothing saved',
    );
  const what = !documents ? 'report' : !reports ? 'document with a URL' : 'report or document';
  throw new CliError(
    `nothing to download: ${wanted === 0 ? `no ${what}` : 'no report is in yet'} for ${count(referrals, 'referral')}`,
    ExitCode.notFound,
    wanted > 0 ? 'Wait until the visit reaches report_uploaded: imaging referrals watch ID' : undefined,
  );
}

/** Each file in turn: one line for each saved or not (the reason), a progress bar on a terminal. */
async function saveAll(
  ctx: Context,
  available: readonly Available[],
  opts: { dir: string; force: boolean; maxBytes: number; human: boolean; failures: string[] },
): Promise<Saved[]> {
  const client = ctx.api();
  const { ProgressBar } = await import('../../output/progress.js');
  const units = { pages: 'files', records: 'bytes' };
  const on = ctx.io.stderrIsTTY && opts.human;
  const saved: Saved[] = [];
  const taken = new Set<string>();
  let bytes = 0;
  for (const [i, w] of available.entries()) {
    const bar = new ProgressBar(ctx.err, on, 'downloading', ctx.io.errColumns ?? 80, units);
    bar.update(i, bytes, available.length);
    try {
      const s = await saveOne(client, w, {
        ...opts,
        taken,
        onData: (received) => bar.update(i, bytes + received, available.length),
      });
      bar.done();
      bytes += s.bytes;
      saved.push(s);
      if (opts.human) ctx.out.line(safe`saved ${s.file} (${formatBytes(s.bytes)})`);
    } catch (err) {
      bar.done();
      if (!(err instanceof NotSaved)) throw err;
      opts.failures.push(err.message);
      ctx.err.line(
        err.message.startsWith('exists: ') ? err.message : safe`error: ${w.label}: ${err.message}`,
      );
    }
  }
  return saved;
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
 * once there is something to save in it.
 */
function checkDir(dir: string, named: boolean, given: string): () => void {
  try {
    if (!statSync(dir).isDirectory()) throw new UsageError(`--dir: ${dir} is not a folder`);
    checkSaveFolder(dir, given);
    return () => {};
  } catch (err) {
    if (err instanceof CliError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !named)
      throw new UsageError(`--dir: cannot use ${dir}: ${reasonOf(err)}`);
  }
  return () => {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new CliError(`--dir: cannot make ${dir}: ${reasonOf(err)}`);
    }
    checkSaveFolder(dir, given);
  };
}

function dedupe<T extends { id: string }>(list: readonly T[]): T[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.id) && seen.add(x.id));
}
