import type { Referral } from '../../api/types.js';

/**
 * The emulator's `q` on GET /referrals, written apart from the CLI's matcher so each checks the
 * other: the reference or a claim number (wc_number, insurance_number), the patient's date of birth
 * (YYYY-MM-DD or MM/DD/YYYY) or name ("Garcia", "Garcia, Mary", "Mary Garcia"); case, accents
 * (ø, æ, ß, ł, đ, œ too), commas and hyphens aside. `imaging mock --ignore-search` answers as if q were not there.
 */
export function searchMatcher(q: string): (r: Referral) => boolean {
  const want = plain(q);
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(q.trim());
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(q.trim());
  const dob = iso
    ? iso[0]
    : us
      ? `${us[3]}-${us[1]!.padStart(2, '0')}-${us[2]!.padStart(2, '0')}`
      : undefined;
  return (r) => {
    if (
      [r.reference, r.wc_number, r.insurance_number].some(
        (v) => typeof v === 'string' && v && plain(v) === want,
      )
    )
      return true;
    const p = r.patient;
    if (!p) return false;
    if (dob) return p.date_of_birth_iso === dob || usToIso(p.date_of_birth) === dob;
    // Names as space-joined words: "Smith, Jr." is also "smith"; Mary "Molly" also "mary".
    // Commas and hyphens are spaces: "Smith, Jr., Aisha" (as tables show it), "rodriguez lopez".
    const first = nameWords(p.first_name ?? '');
    const full = nameWords(p.last_name ?? '');
    const lasts = [full, full.replace(/ (jr|sr|ii|iii|iv)$/, '')];
    const firsts = first.split(' ').map((_, i, all) => all.slice(0, i + 1).join(' '));
    // A last name in other pieces is the same name (O Connor, O'Connor): compared with no spaces.
    const sq = (x: string) => x.replace(/ /g, '');
    const w = sq(nameWords(want));
    return (
      lasts.some((l) => sq(l) === w) ||
      firsts.some((f) => lasts.some((l) => w === sq(f + l) || w === sq(l + f)))
    );
  };
}

function nameWords(s: string): string {
  return plain(s)
    .replace(/['\u2019]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

// Letters with no combining mark under NFD, written without it: Ødegaard is odegaard.
const UNMARKED = new Map(
  Object.entries({
    '\u00f8': 'o', // ø
    '\u00e6': 'ae', // æ
    '\u00df': 'ss', // ß
    '\u0142': 'l', // ł
    '\u0111': 'd', // đ
    '\u0153': 'oe', // œ
    '\u00f0': 'd', // ð
    '\u00fe': 'th', // þ
    '\u0131': 'i', // ı
  }),
);

function plain(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/./gu, (c) => UNMARKED.get(c) ?? c)
    .replace(/\s+/g, ' ')
    .trim();
}

function usToIso(s: string | null | undefined): string | undefined {
  const m = s ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(s) : null;
  return m ? `${m[3]}-${m[1]}-${m[2]}` : undefined;
}
