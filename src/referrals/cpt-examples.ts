/**
 * An example CPT code for a modality and body part, for the guided create's question. The API looks
 * mappings up by exact code only and publishes no list by modality and body part, so the code is
 * typed (then checked against the pair); these are common codes of well-known pairs, by name.
 */
const EXAMPLES: Record<string, string> = {
  'mri brain': '70551',
  'mri cervical spine': '72141',
  'mri thoracic spine': '72146',
  'mri lumbar spine': '72148',
  'mri shoulder': '73221',
  'mri elbow': '73221',
  'mri wrist': '73221',
  'mri hip': '73721',
  'mri knee': '73721',
  'mri ankle': '73721',
  'ct brain': '70450',
  'ct cervical spine': '72125',
  'ct thoracic spine': '72128',
  'ct lumbar spine': '72131',
  'ct chest': '71250',
  'ct shoulder': '73200',
  'ct elbow': '73200',
  'ct wrist': '73200',
  'ct hip': '73700',
  'ct knee': '73700',
  'ct ankle': '73700',
  'x-ray cervical spine': '72040',
  'x-ray lumbar spine': '72100',
  'x-ray shoulder': '73030',
  'x-ray knee': '73562',
  'x-ray chest': '71046',
};

/** The example for the pair, by their names ("MRI", "Knee"), when one is known. */
export function cptExample(modality: string, bodyPart: string): string | undefined {
  return EXAMPLES[`${modality} ${bodyPart}`.trim().toLowerCase().replace(/\s+/g, ' ')];
}

/** Every pair with an example: [modality, body part, code] (for the tests that check them). */
export function cptExamplePairs(): Array<[string, string, string]> {
  return Object.entries(EXAMPLES).map(([pair, code]) => {
    const [modality, ...part] = pair.split(' ');
    return [modality!, part.join(' '), code];
  });
}
