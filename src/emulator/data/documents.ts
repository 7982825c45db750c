import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Procedure, Referral } from '../../api/types.js';

/**
 * The emulator's reports and documents: small real PDFs, linked from a referral once a visit has
 * reached report_uploaded, on the emulator's own origin (below /api/v2, so the token goes there) or
 * on its "storage" origin as links signed with an HMAC over the path and an `expires` time.
 */

/** Visit statuses at or after report_uploaded on the spec's list (exam_not_completed and canceled never are). */
const REPORTED = new Set(['report_uploaded', 'qc_report_ready', 'invoice_ready', 'sent_to_rp']);
const PLACEHOLDER = /^https:\/\/docs\.example\.invalid\//;

/** Where a referral's files are served: a pure function of its id, so every answer agrees. */
export type Placement = 'api' | 'api-redirect' | 'storage' | 'storage-expired';

export function placementOf(id: string): Placement {
  const h = Number.parseInt(id.slice(0, 8), 16) % 6;
  if (h === 3) return 'api-redirect';
  if (h === 4) return 'storage';
  if (h === 5) return 'storage-expired';
  return 'api';
}

export class DocumentLinks {
  private readonly key = randomBytes(32);
  /** Links outlive any run of the emulator; the expired ones ended before it started. */
  private readonly validUntil: number;
  private readonly endedAt: number;

  constructor(
    readonly apiOrigin: string,
    readonly storageOrigin: string,
    now = Date.now(),
  ) {
    this.validUntil = Math.floor(now / 1000) + 7 * 86_400;
    this.endedAt = Math.floor(now / 1000) - 3_600;
  }

  /** The referral with its report links and document URLs set as the service would (idempotent). */
  decorate(referral: Referral): Referral {
    const placement = placementOf(referral.id);
    for (const [v, visit] of referral.visits.entries()) {
      const reported = REPORTED.has(visit.status);
      for (const [p, proc] of visit.procedures.entries()) {
        if (!reported) {
          proc.report_link = null;
          continue;
        }
        proc.accession_id ??= `ACC-${visit.id.slice(0, 6).toUpperCase()}${v}${p}`;
        proc.report_link = this.link(referral.id, `${encodeURIComponent(proc.accession_id)}.pdf`, placement);
      }
    }
    referral.documents = (referral.documents ?? []).map((doc, n) => {
      if (typeof doc !== 'object' || doc === null) return doc;
      const d = doc as Record<string, unknown>;
      if (typeof d.url !== 'string' || !PLACEHOLDER.test(d.url)) return doc;
      const kind = typeof d.kind === 'string' ? d.kind : 'document';
      return { ...d, url: this.link(referral.id, `${n + 1}-${kind}.pdf`, placement, 'documents') };
    });
    return referral;
  }

  private link(id: string, file: string, placement: Placement, kind = 'reports'): string {
    if (placement === 'api' || placement === 'api-redirect')
      return `${this.apiOrigin}/api/v2/referrals/${id}/${kind}/${file}`;
    return this.signed(id, kind, file, placement === 'storage' ? this.validUntil : this.endedAt);
  }

  /** A storage link: `/files/<id>/<kind>/<file>?expires=<unix s>&signature=<hmac hex>`. */
  signed(id: string, kind: string, file: string, expires = this.validUntil): string {
    const path = `/files/${id}/${kind}/${file}`;
    return `${this.storageOrigin}${path}?expires=${expires}&signature=${this.sign(path, expires)}`;
  }

  private sign(path: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${path}\n${expires}`).digest('hex');
  }

  /** Whether a storage request carries a valid signature, and whether its time is up. */
  check(url: URL, now = Date.now()): 'ok' | 'expired' | 'bad' {
    const expires = Number(url.searchParams.get('expires'));
    const given = Buffer.from(url.searchParams.get('signature') ?? '', 'hex');
    const want = Buffer.from(this.sign(url.pathname, expires), 'hex');
    if (!Number.isSafeInteger(expires) || given.length !== want.length || !timingSafeEqual(given, want))
      return 'bad';
    return expires * 1000 < now ? 'expired' : 'ok';
  }
}

/** The PDF of a report or document (`file` URI-decoded), or undefined when the referral has no such file. */
export function documentPdf(referral: Referral, kind: string, file: string): Buffer | undefined {
  if (kind === 'documents') {
    const n = Number.parseInt(file, 10);
    const doc = referral.documents?.[n - 1] as Record<string, unknown> | undefined;
    if (!doc) return undefined;
    return minimalPdf([
      `Referral document ${n} (${String(doc.kind ?? 'document')})`,
      `Referral: ${referral.reference}`,
      'A synthetic document served by the imaging emulator.',
    ]);
  }
  const accession = file.replace(/\.pdf$/, '');
  let found: Procedure | undefined;
  for (const visit of referral.visits) {
    if (!REPORTED.has(visit.status)) continue;
    found ??= visit.procedures.find((p) => p.accession_id === accession);
  }
  if (!found) return undefined;
  return minimalPdf([
    'Radiology report',
    `Referral: ${referral.reference}`,
    `Accession: ${accession}`,
    `Procedure: ${found.procedure ?? ''}`,
    `CPT: ${found.cpt_code ?? 'not coded'}`,
    'Findings: no acute abnormality.',
    'Impression: normal study. A synthetic report served by the imaging emulator.',
  ]);
}

/** The page an expired storage link answers, as a sign-in portal does (200, HTML). */
export const EXPIRED_PAGE =
  '<!doctype html><html><head><title>Link expired</title></head><body><h1>This link has expired</h1><p>Sign in to request a new link.</p></body></html>\n';

/** A one-page PDF (1.4, Helvetica) showing `lines`: valid enough for any reader, no library. */
export function minimalPdf(lines: readonly string[]): Buffer {
  const esc = (t: string) => t.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, '\\$&');
  const text = lines.map((l) => `(${esc(l)}) Tj T*`).join('\n');
  const content = `BT\n/F1 12 Tf\n16 TL\n72 720 Td\n${text}\nET\n`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}endstream`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
