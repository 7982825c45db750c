import { documentPdf, placementOf } from '../data/documents.js';
import { notFound } from '../reply.js';
import { route } from '../router.js';
import type { Ctx, EmulatorState, Reply } from '../types.js';

/** Report and document files on the emulator's own origin (below /api/v2: the token is asked for). */
export const routes = ['reports', 'documents'].map((kind) =>
  route('GET', `/api/v2/referrals/:id/${kind}/:file`, (c, s) => file(c, s, kind)),
);

function file(c: Ctx, s: EmulatorState, kind: string): Reply {
  const referral = s.referrals.get(c.params.id!);
  const pdf = referral && documentPdf(referral, kind, c.params.file!);
  if (!referral || !pdf) return notFound(c, kind === 'reports' ? 'Report' : 'Document');
  // Some referrals keep their files in storage: the API answers with a signed link to it.
  if (placementOf(referral.id) === 'api-redirect' && s.referrals.links)
    return {
      status: 302,
      headers: { location: s.referrals.links.signed(referral.id, kind, c.params.file!) },
    };
  return pdfReply(pdf);
}

export function pdfReply(pdf: Buffer): Reply {
  return {
    status: 200,
    raw: pdf,
    headers: { 'content-type': 'application/pdf', 'content-length': String(pdf.length) },
  };
}
