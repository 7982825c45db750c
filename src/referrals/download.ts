import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../api/client.js';
import { expectRecords } from '../api/shape.js';
import { headerValue, linkUrl, type RawResponse } from '../api/transport.js';
import type { Referral } from '../api/types.js';
import { CliError, InterruptedError } from '../errors.js';
import { reasonOf, writeFileAtomic } from '../fs/write-file.js';
import { checkReferral } from './check.js';
import { documentLink } from './documents.js';

/**
 * What `referrals download` saves of a referral, and the saving: report PDFs and documents with a
 * URL, each fetched whole (never cached), checked, then written 0600 in one rename.
 */

export interface Wanted {
  kind: 'report' | 'document';
  referralId: string;
  reference: string | null;
  /** The report's accession, or the document's number (1 for the first of `documents`). */
  accession?: string | null;
  number?: number;
  /** The file name (sanitised), or the name before its extension is known (a document). */
  name: string;
  url: string | null;
  visitStatus?: string;
  /** How lines name it: `R-240002 ACC-100200 report`, `R-240002 document 1`. */
  label: string;
}

export interface Saved {
  referral_id: string;
  reference: string | null;
  kind: 'report' | 'document';
  accession?: string | null;
  document?: number;
  file: string;
  path: string;
  bytes: number;
  content_type: string | null;
}

/** A name's part from server text: at most this many UTF-8 bytes, so two parts and a suffix fit NAME_MAX (255). */
const MAX_PART_BYTES = 100;

/**
 * A part of a file name from server text: no separator, control, format character or lone surrogate,
 * no leading dot; cut to 100 UTF-8 bytes at a whole code point.
 */
export function safeName(text: string): string {
  const s = text
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu, '')
    .replace(/[/\\:*?"<>|\s]+/g, '_')
    .replace(/^[.\-_]+/, '');
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    bytes += Buffer.byteLength(ch);
    if (bytes > MAX_PART_BYTES) break;
    out += ch;
  }
  return out || '_';
}

/** The shape `wantedOf` reads, as `referrals get` and `documents` check it: else UnreadableAnswerError. */
export function checkDownloadable(value: unknown, where = 'the referral'): Referral {
  checkReferral(value, where);
  expectRecords((value as Record<string, unknown>).documents, where, 'documents');
  return value as Referral;
}

/** The reports and documents of one referral, in the order the referral lists them. */
export function wantedOf(referral: Referral, reports: boolean, documents: boolean): Wanted[] {
  const ref = safeName(String(referral.reference ?? referral.id));
  const out: Wanted[] = [];
  const base = { referralId: referral.id, reference: referral.reference ?? null };
  if (reports) {
    for (const [v, visit] of (referral.visits ?? []).entries()) {
      for (const [p, proc] of (visit.procedures ?? []).entries()) {
        const accession = typeof proc.accession_id === 'string' ? proc.accession_id : null;
        const part = accession ? safeName(accession) : `visit-${v + 1}-procedure-${p + 1}`;
        const which = accession ?? `visit ${v + 1}${visit.modality ? `, ${visit.modality}` : ''}`;
        out.push({
          ...base,
          kind: 'report',
          accession,
          label: `${referral.reference ?? referral.id} ${which}`,
          name: `${ref}_${part}_report.pdf`,
          url: typeof proc.report_link === 'string' && proc.report_link !== '' ? proc.report_link : null,
          visitStatus: visit.status,
        });
      }
    }
  }
  if (documents) {
    for (const [n, doc] of (referral.documents ?? []).entries()) {
      const url = documentLink(doc);
      if (!url) continue;
      out.push({
        ...base,
        kind: 'document',
        number: n + 1,
        name: `${ref}_document-${n + 1}`,
        url,
        label: `${referral.reference ?? referral.id} document ${n + 1}`,
      });
    }
  }
  // Two procedures with one accession would write one file: the second gets a number.
  const seen = new Map<string, number>();
  for (const w of out) {
    const k = seen.get(w.name) ?? 0;
    seen.set(w.name, k + 1);
    if (k > 0) w.name = w.name.replace(/(\.pdf)?$/, `-${k + 1}$1`);
  }
  return out;
}

/**
 * The extensions a saved document may get: documents and images a case file holds. A link's other
 * extension (`.sh`, `.html`, `.exe`) is never used: the file is named from its content type, else `.bin`.
 */
const DOCUMENT_EXTENSIONS = new Set([
  'pdf',
  'png',
  'jpg',
  'jpeg',
  'gif',
  'tif',
  'tiff',
  'txt',
  'xml',
  'json',
  'dcm',
]);
const TYPE_EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/tiff': 'tif',
  'text/plain': 'txt',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/json': 'json',
  'application/dicom': 'dcm',
};

/** The allowed extension a link's path ends in (`pdf` of `/files/1-aob.pdf?sig=…`). */
function urlExtension(url: string): string | undefined {
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return ext !== undefined && DOCUMENT_EXTENSIONS.has(ext) ? ext : undefined;
}

/** A document's extension: its URL's (if allowed), else its content type's, else what it is (a PDF), else `bin`. */
function documentExtension(url: string, res: RawResponse): string {
  const type = (headerValue(res.headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return urlExtension(url) ?? TYPE_EXTENSIONS[type] ?? (startsPdf(res) ? 'pdf' : 'bin');
}

const startsPdf = (res: RawResponse) =>
  res.body.length >= 5 && res.body.bytes.subarray(0, 5).toString('latin1') === '%PDF-';

function isHtml(res: RawResponse): boolean {
  const type = headerValue(res.headers, 'content-type') ?? '';
  const head = res.body.bytes.subarray(0, 512).toString('utf8').trimStart().toLowerCase();
  return /html/i.test(type) || head.startsWith('<!doctype html') || head.startsWith('<html');
}

export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** An item that could not be saved: one line says why, the others go on. */
export class NotSaved extends Error {
  constructor(
    message: string,
    readonly status: 'exists' | 'failed' = 'failed',
  ) {
    super(message);
  }
}

/**
 * `name`, or with -2, -3… before its extension when this run already saved a file by that name, in any
 * case: two referrals whose names sanitise alike, or differ only in case, never share a file.
 */
export function unusedName(name: string, taken: ReadonlySet<string>): string {
  let n = name;
  for (let k = 2; taken.has(nameKey(n)); k++) n = name.replace(/(\.[A-Za-z0-9]{1,8})?$/, `-${k}$1`);
  return n;
}

/** Names equal on a case-insensitive, normalising file system (macOS, Windows) are one name: one key. */
export const nameKey = (name: string): string => name.normalize('NFC').toLowerCase();

/** Fetches one wanted file and saves it in `dir`; NotSaved says why it was not. */
export async function saveOne(
  client: ApiClient,
  w: Wanted & { url: string },
  opts: {
    dir: string;
    force: boolean;
    maxBytes: number;
    /** The names this run saved, as `nameKey`s: never written again (each is added once saved). */
    taken: Set<string>;
    onData?: (received: number, total: number | undefined) => void;
    /** Settled once the files before this one are named: names are given in the order asked. */
    turn?: Promise<unknown>;
  },
): Promise<Saved> {
  // A link that is not an absolute http(s) URL is this file's failure, not the run's.
  if (!URL.canParse(w.url)) throw new NotSaved('the link is not an absolute URL; not fetched');
  const target = (name: string) => join(opts.dir, name);
  const refuseExisting = (name: string) => {
    if (!opts.force && exists(target(name))) throw new NotSaved(`exists: ${name} (use --force)`, 'exists');
  };
  // Known before the request, so an existing file costs none.
  const known = w.kind === 'report' ? w.name : urlExtension(w.url) && `${w.name}.${urlExtension(w.url)}`;
  if (known) refuseExisting(unusedName(known, opts.taken));
  let res: RawResponse;
  try {
    res = await client.fetchLink(w.url, { maxBytes: opts.maxBytes, onData: opts.onData });
  } catch (err) {
    if (err instanceof CliError && /^response larger than/.test(err.message))
      throw new NotSaved(`larger than --max-size (${opts.maxBytes} bytes); not saved`);
    if (err instanceof CliError && !(err instanceof InterruptedError)) throw new NotSaved(err.message);
    throw err;
  }
  await opts.turn;
  const shown = linkUrl(w.url);
  if (res.status < 200 || res.status >= 300)
    throw new NotSaved(`HTTP ${res.status} from ${shown}; not saved`);
  if (isHtml(res))
    throw new NotSaved('the link answered an HTML page (an expired link or a sign-in page?); not saved');
  const name = unusedName(
    w.kind === 'report' ? w.name : `${w.name}.${documentExtension(w.url, res)}`,
    opts.taken,
  );
  if (name.endsWith('.pdf') && !startsPdf(res))
    throw new NotSaved(
      `the link answered something that is not a PDF (it does not start with %PDF-); not saved`,
    );
  refuseExisting(name);
  try {
    writeFileAtomic(target(name), res.body.bytes);
  } catch (err) {
    throw new NotSaved(`could not save ${name}: ${reasonOf(err)}`);
  }
  opts.taken.add(nameKey(name));
  return {
    referral_id: w.referralId,
    reference: w.reference,
    kind: w.kind,
    ...(w.kind === 'report' ? { accession: w.accession ?? null } : { document: w.number ?? 0 }),
    file: name,
    path: target(name),
    bytes: res.body.length,
    content_type: headerValue(res.headers, 'content-type') ?? null,
  };
}
