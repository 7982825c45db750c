import type { ApiClient, ApiResponse } from '../client.js';
import type { BodyPart, CptMapping, Icd10Code, Modality } from '../types.js';
import type { ListEndpoint } from './list.js';

export const MODALITIES_PATH = '/modalities';
const BODY_PARTS_PATH = '/body_parts';
const CPT_CODES_PATH = '/cpt_codes';
const ICD10_CODES_PATH = '/icd10_codes';

interface Call {
  signal?: AbortSignal | undefined;
}

export function listModalities(client: ApiClient, opts: Call = {}): Promise<ApiResponse<Modality[]>> {
  return client.request<Modality[]>({ path: MODALITIES_PATH, signal: opts.signal });
}

export function listBodyParts(
  client: ApiClient,
  opts: Call & { modality?: string | undefined } = {},
): Promise<ApiResponse<BodyPart[]>> {
  return client.request<BodyPart[]>({
    path: BODY_PARTS_PATH,
    query: { modality: opts.modality },
    signal: opts.signal,
  });
}

export function cptMappings(
  client: ApiClient,
  code: string,
  opts: Call = {},
): Promise<ApiResponse<CptMapping[]>> {
  return client.request<CptMapping[]>({ path: CPT_CODES_PATH, query: { code }, signal: opts.signal });
}

/** ICD-10 search: `q` against code and short description, `ids` included and put first. */
export function icd10Codes(query: {
  q?: string | undefined;
  ids?: string[] | undefined;
}): ListEndpoint<Icd10Code> {
  return { path: ICD10_CODES_PATH, key: 'icd10_codes', query };
}
