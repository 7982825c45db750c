import type { ApiClient } from '../api/client.js';
import { cptMappings, listBodyParts, listModalities } from '../api/endpoints/reference.js';
import { extractList } from '../api/pages.js';
import { readingAnswer } from '../api/shape.js';
import type { BodyPart, CptMapping, Icd10Code, LawFirm, Modality } from '../api/types.js';
import { isUuid, normaliseUuid } from '../cli/args.js';
import { readList } from '../cli/read-list.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { clean } from '../output/text.js';
import { BODY_PART_TEXT } from '../resources/body-parts.js';
import { CPT_TEXT } from '../resources/cpt.js';
import { ICD10_TEXT } from '../resources/icd10.js';
import { LAW_FIRM_TEXT } from '../resources/law-firms.js';
import { MODALITY_TEXT } from '../resources/modalities.js';
import { cptExample } from './cpt-examples.js';
import {
  CREATE_LINES_OF_BUSINESS,
  CREATE_PAYMENT_TYPES,
  defaultPaymentType,
  isoDateOfBirth,
  mappingLabel,
  type NewExam,
  type NewPatient,
  type NewReferral,
  SCHEDULING_MODES,
} from './new-referral.js';

// The guided `referrals create`: the questions, in the order a referral form asks them. Answers stay
// in memory; the reference lists (modalities, body parts, a code's CPT mappings) come through the
// reference cache, and the searches typed (ICD-10, law firms) are sent uncached, so nothing typed
// reaches the disk.

export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
}

/** The questions a guided flow asks (inquirer on a terminal; a script in tests). */
export interface Asker {
  text(
    message: string,
    opts?: {
      required?: boolean;
      default?: string;
      validate?: (value: string) => boolean | string | Promise<boolean | string>;
    },
  ): Promise<string>;
  select<T>(message: string, choices: readonly Choice<T>[], def?: T): Promise<T>;
  search<T>(message: string, source: (term: string, signal: AbortSignal) => Promise<Choice<T>[]>): Promise<T>;
  confirm(message: string, def?: boolean): Promise<boolean>;
}

const US_STATES =
  'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA PR RI SC SD TN TX UT VT VA WA WV WI WY GU VI AS MP'.split(
    ' ',
  );

const words = (value: string) => value.replace(/_/g, ' ');
const choicesOf = (values: readonly string[]) => values.map((v) => ({ name: words(v), value: v }));

/** Every answer of the guided flow, asked in turn. */
export async function askNewReferral(ctx: Context, ask: Asker): Promise<NewReferral> {
  const patient = await askPatient(ask);
  const lineOfBusiness = await ask.select('Line of business', choicesOf(CREATE_LINES_OF_BUSINESS));
  const paymentType = await ask.select(
    'Payment type',
    choicesOf(CREATE_PAYMENT_TYPES),
    defaultPaymentType(lineOfBusiness),
  );
  const incidentState = (
    await ask.text('Incident state (two letters, e.g. TX)', {
      required: true,
      validate: (v) => US_STATES.includes(v.trim().toUpperCase()) || 'a US state or territory: two letters',
    })
  )
    .trim()
    .toUpperCase();
  const exams = await askExams(ctx, ask);
  const icd10Ids = await askIcd10(ctx, ask);
  const lawFirmId = await askLawFirm(ctx, ask);
  const schedulingMode = await ask.select<string | undefined>('Scheduling mode', [
    ...choicesOf(SCHEDULING_MODES),
    { name: 'not set', value: undefined },
  ]);
  const location = await ask.text('Preferred imaging center id (empty: none)', {
    validate: (v) => v.trim() === '' || isUuid(v.trim()) || 'an imaging center id (a UUID), or empty',
  });
  const preferredLocationId = location.trim() ? normaliseUuid(location.trim()) : undefined;
  return {
    patient,
    lineOfBusiness,
    paymentType,
    incidentState,
    exams,
    icd10Ids,
    lawFirmId,
    schedulingMode,
    preferredLocationId,
  };
}

async function askPatient(ask: Asker): Promise<NewPatient> {
  const required = { required: true, validate: (v: string) => v.trim() !== '' || 'required' };
  const first = (await ask.text('Patient first name', required)).trim();
  const last = (await ask.text('Patient last name', required)).trim();
  const dob = await ask.text('Date of birth (YYYY-MM-DD or MM/DD/YYYY)', {
    required: true,
    validate: (v) => {
      const d = isoDateOfBirth(v);
      return 'iso' in d || d.error;
    },
  });
  const born = isoDateOfBirth(dob);
  const phone = await ask.text('Phone number (empty: none)', {
    validate: (v) => v.trim() === '' || v.replace(/\D/g, '').length >= 10 || 'ten digits or more, or empty',
  });
  const email = await ask.text('Email (empty: none)', {
    validate: (v) =>
      v.trim() === '' || /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.trim()) || 'an email address, or empty',
  });
  return {
    first_name: first,
    last_name: last,
    date_of_birth_iso: 'iso' in born ? born.iso : '',
    phone_number: phone.trim() || undefined,
    email: email.trim() || undefined,
  };
}

async function askExams(ctx: Context, ask: Asker): Promise<NewExam[]> {
  const api = ctx.referenceApi();
  const modalities = readList<Modality>(await listModalities(api), 'modalities', 'table', MODALITY_TEXT);
  if (modalities.length === 0) throw new CliError('the API lists no modalities: no exam can be chosen');
  const exams: NewExam[] = [];
  for (;;) {
    const modality = await ask.select(
      exams.length === 0 ? 'Exam: modality' : 'Next exam: modality',
      modalities.map((m) => ({ name: clean(m.name), value: m })),
    );
    const parts = readList<BodyPart>(
      await listBodyParts(api, { modality: modality.id }),
      'body parts',
      'table',
      BODY_PART_TEXT,
    );
    if (parts.length === 0) {
      ctx.note(`The API lists no body parts for ${clean(modality.name)}: choose another modality.`);
      continue; // an exam is still to be chosen
    }
    const part = await ask.select(
      'Body part',
      parts.map((b) => ({ name: clean(b.name), value: b })),
    );
    const mapping = await askMapping(api, ask, modality, part);
    exams.push({ modality: modality.name, mapping });
    if (!(await ask.confirm('Add another exam?', false))) return exams;
  }
}

/** The CPT code of the exam, then which of its mappings for this modality and body part (side, contrast). */
async function askMapping(
  api: ApiClient,
  ask: Asker,
  modality: Modality,
  part: BodyPart,
): Promise<CptMapping> {
  const pair = `${clean(modality.name)} ${clean(part.name)}`;
  let fitting: CptMapping[] = [];
  // A failed lookup ends the prompt and is thrown after it (a prompt's check cannot throw).
  let failed: unknown;
  // The API looks mappings up by exact code only: the code is asked, then checked against the pair.
  // An example only when one fits the pair (a knee's code under a shoulder misleads).
  const example = cptExample(modality.name, part.name);
  await ask.text(`CPT code of the ${pair} exam${example ? ` (e.g. ${example})` : ''}`, {
    required: true,
    validate: async (typed) => {
      const code = typed.trim().toUpperCase();
      if (!/^[0-9A-Z]{5}$/.test(code)) return `five letters or digits${example ? `, e.g. ${example}` : ''}`;
      let all: CptMapping[];
      try {
        all = readList<CptMapping>(await cptMappings(api, code), 'CPT mappings', 'table', CPT_TEXT);
      } catch (err) {
        failed = err;
        return true;
      }
      fitting = all.filter((m) => m.modality_id === modality.id && m.body_part_id === part.id);
      if (fitting.length > 0) return true;
      const others = [...new Set(all.map((m) => `${m.modality_name} ${m.body_part_name}`))];
      return clean(
        others.length > 0
          ? `${code} is not a ${pair} exam (it is: ${others.join('; ')})`
          : `no mapping has the code ${code} (imaging body-parts --modality ${modality.name} lists the body parts)`,
      );
    },
  });
  if (failed !== undefined) throw failed;
  if (fitting.length === 1) return fitting[0]!;
  return ask.select(
    'Which one (side, contrast)',
    fitting.map((m) => ({ name: clean(mappingLabel(m)), value: m })),
  );
}

async function askIcd10(ctx: Context, ask: Asker): Promise<string[]> {
  const client = ctx.api();
  const chosen: string[] = [];
  for (;;) {
    const picked = await ask.search<Icd10Code | null>(
      chosen.length === 0 ? 'ICD-10 code (type to search)' : 'Another ICD-10 code (type to search)',
      async (term, signal) => {
        const done = { name: chosen.length === 0 ? 'no ICD-10 code' : 'no more ICD-10 codes', value: null };
        if (term.trim() === '') return [done];
        const found = await searchList<Icd10Code>(client, '/icd10_codes', term, ICD10_TEXT, signal);
        const left = found.filter((c) => !chosen.includes(c.id));
        return [...left.map((c) => ({ name: clean(`${c.code}  ${c.short_description}`), value: c })), done];
      },
    );
    if (!picked) return chosen;
    chosen.push(picked.id);
  }
}

async function askLawFirm(ctx: Context, ask: Asker): Promise<string | undefined> {
  const client = ctx.api();
  const firm = await ask.search<LawFirm | null>('Law firm (type to search)', async (term, signal) => {
    const none = { name: 'no law firm', value: null };
    if (term.trim() === '') return [none];
    const found = await searchList<LawFirm>(client, '/law_firms', term, LAW_FIRM_TEXT, signal);
    return [...found.map((f) => ({ name: clean(`${f.name}  ${f.city}, ${f.state}`), value: f })), none];
  });
  return firm?.id;
}

/** One page of a search, as typed: never from or into the cache. */
async function searchList<T>(
  client: ApiClient,
  path: string,
  term: string,
  text: readonly string[],
  signal: AbortSignal,
): Promise<T[]> {
  try {
    const res = await client.request({
      path,
      query: { q: term.trim(), per_page: 20 },
      signal,
      uncached: true,
    });
    const items = readingAnswer(res.requestId, () => extractList<T>(res.data).items);
    return readList<T>({ data: items, requestId: res.requestId }, 'search results', 'table', text);
  } catch (err) {
    // Shown under the search box, which prints it as it is: the server's words cleaned first.
    throw new Error(clean(err instanceof Error ? err.message : String(err)));
  }
}
