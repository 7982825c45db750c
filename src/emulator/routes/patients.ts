import { uuidFrom } from '../data/random.js';
import { PATIENT_SYSTEM } from '../data/referral-data.js';
import { blank, invalid, jsonBody } from '../reply.js';
import { route } from '../router.js';

// The spec names POST /api/v2/patients without shapes: every field the payload sets is echoed, the rest null.
export const routes = [
  route('POST', '/api/v2/patients', (c, s) => {
    const body = jsonBody(c);
    const p = (
      typeof body === 'object' && body !== null ? ((body as Record<string, unknown>).patient ?? body) : {}
    ) as Record<string, unknown>;
    const errors: string[] = [];
    if (blank(p.first_name)) errors.push("First name can't be blank");
    if (blank(p.last_name)) errors.push("Last name can't be blank");
    if (errors.length > 0) return invalid(c, errors);
    return {
      status: 201,
      body: {
        id: uuidFrom(s.idRand),
        first_name: p.first_name,
        middle_initial: p.middle_initial ?? null,
        last_name: p.last_name,
        email: p.email ?? null,
        phone_number: p.phone_number ?? '',
        date_of_birth: usDate(p.date_of_birth_iso) ?? p.date_of_birth ?? null,
        date_of_birth_iso: p.date_of_birth_iso ?? null,
        identifier: { system: PATIENT_SYSTEM, value: uuidFrom(s.idRand) },
        address_line_1: p.address_line_1 ?? null,
        address_line_2: p.address_line_2 ?? null,
        city: p.city ?? null,
        state: p.state ?? null,
        zip_code: p.zip_code ?? null,
        gender: p.gender ?? null,
        // Echoed as sent (`-F 'patient[weight]=130'` is a number; `-f` a string, kept as given).
        weight: p.weight ?? null,
        height_feet: p.height_feet ?? null,
        height_inches: p.height_inches ?? null,
      },
    };
  }),
];

function usDate(iso: unknown): string | undefined {
  const m = typeof iso === 'string' ? iso.match(/^(\d{4})-(\d{2})-(\d{2})$/) : null;
  return m ? `${m[2]}/${m[3]}/${m[1]}` : undefined;
}
