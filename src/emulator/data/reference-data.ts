import type { BodyPart, CptMapping, Icd10Code, LawFirm, Modality } from '../../api/types.js';
import { rng, uuidFrom } from './random.js';

/** Synthetic reference data for the emulator: realistic codes and names, no real patients. */

const MODALITIES: Array<[string, string]> = [
  ['MRI', 'mri'],
  ['CT', 'ct'],
  ['X-Ray', 'x-ray'],
  ['Ultrasound', 'ultrasound'],
  ['Arthrogram', 'arthrogram'],
  ['EMG/NCV', 'emg-ncv'],
  ['PET/CT', 'pet-ct'],
  ['DEXA', 'dexa'],
];

// name, lateral?, modalities
const BODY_PARTS: Array<[string, boolean, string[]]> = [
  ['Brain', false, ['MRI', 'CT', 'PET/CT']],
  ['Cervical Spine', false, ['MRI', 'CT', 'X-Ray']],
  ['Thoracic Spine', false, ['MRI', 'CT', 'X-Ray']],
  ['Lumbar Spine', false, ['MRI', 'CT', 'X-Ray', 'DEXA']],
  ['Shoulder', true, ['MRI', 'CT', 'X-Ray', 'Ultrasound', 'Arthrogram']],
  ['Elbow', true, ['MRI', 'CT', 'X-Ray', 'Arthrogram']],
  ['Wrist', true, ['MRI', 'CT', 'X-Ray', 'Arthrogram']],
  ['Hand', true, ['MRI', 'X-Ray']],
  ['Hip', true, ['MRI', 'CT', 'X-Ray', 'Arthrogram', 'DEXA']],
  ['Knee', true, ['MRI', 'CT', 'X-Ray', 'Ultrasound', 'Arthrogram']],
  ['Ankle', true, ['MRI', 'CT', 'X-Ray', 'Arthrogram']],
  ['Foot', true, ['MRI', 'X-Ray']],
  ['Humerus', true, ['MRI', 'X-Ray']],
  ['Forearm', true, ['MRI', 'X-Ray']],
  ['Femur', true, ['MRI', 'X-Ray']],
  ['Tibia/Fibula', true, ['MRI', 'X-Ray']],
  ['Chest', false, ['CT', 'X-Ray', 'PET/CT']],
  ['Abdomen', false, ['MRI', 'CT', 'Ultrasound']],
  ['Pelvis', false, ['MRI', 'CT', 'X-Ray']],
  ['Abdomen & Pelvis', false, ['CT']],
  ['Neck Soft Tissue', false, ['CT', 'Ultrasound']],
  ['Upper Extremity Nerves', true, ['EMG/NCV']],
  ['Lower Extremity Nerves', true, ['EMG/NCV']],
  ['Whole Body', false, ['PET/CT']],
];

type Spec = [
  code: string,
  modality: string,
  parts: string[],
  contrast: CptMapping['contrast'],
  views?: number[],
];
const W = 'with_contrast';
const WO = 'without_contrast';
const WWO = 'without_and_with_contrast';

const CPT: Spec[] = [
  ['70551', 'MRI', ['Brain'], WO],
  ['70552', 'MRI', ['Brain'], W],
  ['70553', 'MRI', ['Brain'], WWO],
  ['72141', 'MRI', ['Cervical Spine'], WO],
  ['72142', 'MRI', ['Cervical Spine'], W],
  ['72156', 'MRI', ['Cervical Spine'], WWO],
  ['72146', 'MRI', ['Thoracic Spine'], WO],
  ['72147', 'MRI', ['Thoracic Spine'], W],
  ['72157', 'MRI', ['Thoracic Spine'], WWO],
  ['72148', 'MRI', ['Lumbar Spine'], WO],
  ['72149', 'MRI', ['Lumbar Spine'], W],
  ['72158', 'MRI', ['Lumbar Spine'], WWO],
  ['73221', 'MRI', ['Shoulder', 'Elbow', 'Wrist'], WO],
  ['73222', 'MRI', ['Shoulder', 'Elbow', 'Wrist'], W],
  ['73222', 'Arthrogram', ['Shoulder', 'Elbow', 'Wrist'], W],
  ['73223', 'MRI', ['Shoulder', 'Elbow', 'Wrist'], WWO],
  ['73218', 'MRI', ['Humerus', 'Forearm'], WO],
  ['73718', 'MRI', ['Femur', 'Tibia/Fibula'], WO],
  ['73721', 'MRI', ['Hip', 'Knee', 'Ankle'], WO],
  ['73722', 'MRI', ['Hip', 'Knee', 'Ankle'], W],
  ['73722', 'Arthrogram', ['Hip', 'Knee', 'Ankle'], W],
  ['73723', 'MRI', ['Hip', 'Knee', 'Ankle'], WWO],
  ['73718', 'MRI', ['Foot'], WO],
  ['74181', 'MRI', ['Abdomen'], WO],
  ['72195', 'MRI', ['Pelvis'], WO],
  ['70450', 'CT', ['Brain'], WO],
  ['70460', 'CT', ['Brain'], W],
  ['70470', 'CT', ['Brain'], WWO],
  ['72125', 'CT', ['Cervical Spine'], WO],
  ['72128', 'CT', ['Thoracic Spine'], WO],
  ['72131', 'CT', ['Lumbar Spine'], WO],
  ['71250', 'CT', ['Chest'], WO],
  ['71260', 'CT', ['Chest'], W],
  ['74176', 'CT', ['Abdomen & Pelvis'], WO],
  ['74177', 'CT', ['Abdomen & Pelvis'], W],
  ['74178', 'CT', ['Abdomen & Pelvis'], WWO],
  ['73200', 'CT', ['Shoulder', 'Elbow', 'Wrist'], WO],
  ['73700', 'CT', ['Hip', 'Knee', 'Ankle'], WO],
  ['70490', 'CT', ['Neck Soft Tissue'], WO],
  ['72040', 'X-Ray', ['Cervical Spine'], WO, [2, 3]],
  ['72050', 'X-Ray', ['Cervical Spine'], WO, [4, 5]],
  ['72070', 'X-Ray', ['Thoracic Spine'], WO, [3]],
  ['72100', 'X-Ray', ['Lumbar Spine'], WO, [2, 3]],
  ['72110', 'X-Ray', ['Lumbar Spine'], WO, [4, 5, 6]],
  ['73030', 'X-Ray', ['Shoulder'], WO, [2, 3]],
  ['73070', 'X-Ray', ['Elbow'], WO, [2]],
  ['73110', 'X-Ray', ['Wrist'], WO, [3]],
  ['73130', 'X-Ray', ['Hand'], WO, [3]],
  ['73502', 'X-Ray', ['Hip'], WO, [2, 3]],
  ['73560', 'X-Ray', ['Knee'], WO, [1, 2]],
  ['73562', 'X-Ray', ['Knee'], WO, [3]],
  ['73564', 'X-Ray', ['Knee'], WO, [4]],
  ['73610', 'X-Ray', ['Ankle'], WO, [3]],
  ['73630', 'X-Ray', ['Foot'], WO, [3]],
  ['71046', 'X-Ray', ['Chest'], WO, [2]],
  ['72170', 'X-Ray', ['Pelvis'], WO, [1, 2]],
  ['76700', 'Ultrasound', ['Abdomen'], WO],
  ['76536', 'Ultrasound', ['Neck Soft Tissue'], WO],
  ['76881', 'Ultrasound', ['Shoulder', 'Knee'], WO],
  ['76882', 'Ultrasound', ['Shoulder', 'Knee'], WO],
  ['95886', 'EMG/NCV', ['Upper Extremity Nerves', 'Lower Extremity Nerves'], WO],
  ['95910', 'EMG/NCV', ['Upper Extremity Nerves', 'Lower Extremity Nerves'], WO],
  ['78815', 'PET/CT', ['Whole Body'], W],
  ['77080', 'DEXA', ['Hip', 'Lumbar Spine'], WO],
];

/** The right side's code and description, then the left's (the code's last digit one more). */
function sided(right: string, description: string): Array<[string, string]> {
  const left = `${right.slice(0, -1)}${Number(right.at(-1)) + 1}`;
  return [
    [right, description.replaceAll('{side}', 'right')],
    [left, description.replaceAll('{side}', 'left')],
  ];
}

// Real ICD-10-CM codes common in injury and musculoskeletal imaging; injury codes get 7th-character variants.
const ICD10: Array<[string, string]> = [
  ['M54.50', 'Low back pain, unspecified'],
  ['M54.51', 'Vertebrogenic low back pain'],
  ['M54.2', 'Cervicalgia'],
  ['M54.6', 'Pain in thoracic spine'],
  ['M54.16', 'Radiculopathy, lumbar region'],
  ['M54.17', 'Radiculopathy, lumbosacral region'],
  ['M54.12', 'Radiculopathy, cervical region'],
  ['M51.26', 'Other intervertebral disc displacement, lumbar region'],
  ['M51.27', 'Other intervertebral disc displacement, lumbosacral region'],
  ['M50.20', 'Other cervical disc displacement, unspecified cervical region'],
  ['M50.221', 'Other cervical disc displacement at C4-C5 level'],
  ['M50.222', 'Other cervical disc displacement at C5-C6 level'],
  ['M47.816', 'Spondylosis without myelopathy or radiculopathy, lumbar region'],
  ['M47.812', 'Spondylosis without myelopathy or radiculopathy, cervical region'],
  ['M48.061', 'Spinal stenosis, lumbar region without neurogenic claudication'],
  ...sided('M25.511', 'Pain in {side} shoulder'),
  ...sided('M25.521', 'Pain in {side} elbow'),
  ...sided('M25.531', 'Pain in {side} wrist'),
  ...sided('M25.551', 'Pain in {side} hip'),
  ...sided('M25.561', 'Pain in {side} knee'),
  ...sided('M25.571', 'Pain in {side} ankle and joints of {side} foot'),
  ...sided(
    'M75.101',
    'Unspecified rotator cuff tear or rupture of {side} shoulder, not specified as traumatic',
  ),
  ...sided('M75.41', 'Impingement syndrome of {side} shoulder'),
  ...sided('M23.211', 'Derangement of anterior horn of medial meniscus due to old tear, {side} knee'),
  ...sided('M17.11', 'Unilateral primary osteoarthritis, {side} knee'),
  ...sided('M16.11', 'Unilateral primary osteoarthritis, {side} hip'),
  ...sided('G56.01', 'Carpal tunnel syndrome, {side} upper limb'),
  ['G44.309', 'Post-traumatic headache, unspecified, not intractable'],
  ['R51.9', 'Headache, unspecified'],
  ['R42', 'Dizziness and giddiness'],
  ['R20.2', 'Paresthesia of skin'],
  ...sided('M79.601', 'Pain in {side} arm'),
  ...sided('M79.604', 'Pain in {side} leg'),
  ['S13.4', 'Sprain of ligaments of cervical spine'],
  ['S16.1', 'Strain of muscle, fascia and tendon at neck level'],
  ['S23.3', 'Sprain of ligaments of thoracic spine'],
  ['S29.012', 'Strain of muscle and tendon of back wall of thorax'],
  ['S33.5', 'Sprain of ligaments of lumbar spine'],
  ['S39.012', 'Strain of muscle, fascia and tendon of lower back'],
  ...sided('S43.401', 'Unspecified sprain of {side} shoulder joint'),
  ...sided('S46.011', 'Strain of muscle(s) and tendon(s) of the rotator cuff of {side} shoulder'),
  ['S53.401', 'Unspecified sprain of right elbow'],
  ...sided('S63.501', 'Unspecified sprain of {side} wrist'),
  ['S73.101', 'Unspecified sprain of right hip'],
  ...sided('S83.201', 'Tear of unspecified meniscus, current injury, {side} knee'),
  ...sided('S83.511', 'Sprain of anterior cruciate ligament of {side} knee'),
  ...sided('S83.91', 'Sprain of unspecified site of {side} knee'),
  ...sided('S93.401', 'Sprain of unspecified ligament of {side} ankle'),
  ['S06.0X0', 'Concussion without loss of consciousness'],
  ['S06.0X1', 'Concussion with loss of consciousness of 30 minutes or less'],
  ['S32.010', 'Wedge compression fracture of first lumbar vertebra'],
  ['S42.001', 'Fracture of unspecified part of right clavicle'],
  ['S52.501', 'Unspecified fracture of the lower end of right radius'],
  ['S82.001', 'Unspecified fracture of right patella'],
  ['S92.001', 'Unspecified fracture of right calcaneus'],
  ['S13.8', 'Sprain of joints and ligaments of other parts of neck'],
  ['S14.2', 'Injury of nerve root of cervical spine'],
  ...sided('S20.211', 'Contusion of {side} front wall of thorax'),
  ...sided('S22.31', 'Fracture of one rib, {side} side'),
  ['S30.0', 'Contusion of lower back and pelvis'],
  ['S34.21', 'Injury of nerve root of lumbar spine'],
  ...sided('S40.011', 'Contusion of {side} shoulder'),
  ...sided('S43.431', 'Superior glenoid labrum lesion of {side} shoulder'),
  ...sided('S50.01', 'Contusion of {side} elbow'),
  ...sided('S60.211', 'Contusion of {side} wrist'),
  ...sided('S62.001', 'Unspecified fracture of navicular [scaphoid] bone of {side} wrist'),
  ...sided('S70.01', 'Contusion of {side} hip'),
  ['S76.011', 'Strain of muscle, fascia and tendon of right hip'],
  ...sided('S80.01', 'Contusion of {side} knee'),
  ...sided('S83.241', 'Other tear of medial meniscus, current injury, {side} knee'),
  ...sided('S83.281', 'Other tear of lateral meniscus, current injury, {side} knee'),
  ...sided('S86.011', 'Strain of {side} Achilles tendon'),
  ...sided('S90.01', 'Contusion of {side} ankle'),
  ...sided('S93.601', 'Unspecified sprain of {side} foot'),
  ['M54.40', 'Lumbago with sciatica, unspecified side'],
  ...sided('M54.41', 'Lumbago with sciatica, {side} side'),
  ['M53.82', 'Other specified dorsopathies, cervical region'],
  ['M62.830', 'Muscle spasm of back'],
  ['M65.4', 'Radial styloid tenosynovitis [de Quervain]'],
  ['M67.911', 'Unspecified disorder of synovium and tendon, right shoulder'],
  ...sided('M70.61', 'Trochanteric bursitis, {side} hip'),
  ['M76.51', 'Patellar tendinitis, right knee'],
  ...sided('M77.11', 'Lateral epicondylitis, {side} elbow'),
  ['M72.2', 'Plantar fascial fibromatosis'],
  ...sided('M94.261', 'Chondromalacia, {side} knee'),
  ['G89.11', 'Acute pain due to trauma'],
  ['G89.21', 'Chronic pain due to trauma'],
  ['F07.81', 'Postconcussional syndrome'],
  ['R26.81', 'Unsteadiness on feet'],
  ['R29.898', 'Other symptoms and signs involving the musculoskeletal system'],
  ['V43.52', 'Car driver injured in collision with other motor vehicle in traffic accident'],
  [
    'W01.0XX',
    'Fall on same level from slipping, tripping and stumbling without subsequent striking against object',
  ],
  ['W19.XXX', 'Unspecified fall'],
];

const SEVENTH: Array<[string, string]> = [
  ['A', 'initial encounter'],
  ['D', 'subsequent encounter'],
  ['S', 'sequela'],
];

const LAW_FIRMS: Array<[string, string, string, string, string, string | null]> = [
  ["O'Brien & Associates, P.C.", '120 Market St', 'Philadelphia', 'PA', '19106', 'Suite 400'],
  ['Smith, Jones & "Partners" LLP', '500 W Madison St', 'Chicago', 'IL', '60661', null],
  ['Müller Rechtsanwälte Injury Group', '88 Pine St', 'New York', 'NY', '10005', 'Floor 12'],
  ['Peña & Núñez Abogados', '1010 Brickell Ave', 'Miami', 'FL', '33131', null],
  ['Nguyễn Law Office', '2 Bryant St', 'San Francisco', 'CA', '94105', 'Unit 3'],
  ['Zhāng, Wáng & Lǐ Legal', '350 S Grand Ave', 'Los Angeles', 'CA', '90071', null],
  ['The Law Offices of Jane Doe-Smith, Esq.', '77 Water St', 'Boston', 'MA', '02109', null],
  ['=Equity Injury Lawyers', '12 Main St', 'Dallas', 'TX', '75201', null],
  ['+Plus Legal Group', '45 Elm St', 'Houston', 'TX', '77002', null],
  ['Baker McKenzie-Hart Injury Attorneys', '1 Penn Plz', 'New York', 'NY', '10119', 'Suite 2100'],
  ['Ramírez, Ortiz y Asociados', '600 Congress Ave', 'Austin', 'TX', '78701', null],
  ["D'Angelo & D'Amato", '250 Broad St', 'Newark', 'NJ', '07102', null],
  ['Øresund Accident Law', '19 Harbor Way', 'Seattle', 'WA', '98101', null],
  ['Hart & Hart (No Relation)', '400 Capitol Mall', 'Sacramento', 'CA', '95814', null],
  ['Greene Personal Injury Law, PLLC', '3030 N Central Ave', 'Phoenix', 'AZ', '85012', 'Suite 1100'],
  ['Morgan & Morgan-Style Trial Lawyers', '20 N Orange Ave', 'Orlando', 'FL', '32801', null],
  ['Cohen | Levy | Katz', '1500 Walnut St', 'Philadelphia', 'PA', '19102', null],
  ['Åkesson Injury Law', '90 S 7th St', 'Minneapolis', 'MN', '55402', null],
  ['Bălan & Popescu Legal', '211 E 7th St', 'Cincinnati', 'OH', '45202', null],
  ['Kowalski, Nowak & Wiśniewski', '55 W Monroe St', 'Chicago', 'IL', '60603', 'Suite 900'],
  ['Thompson Workers’ Comp Advocates', '101 Federal St', 'Boston', 'MA', '02110', null],
  ['Patel & Shah, Attorneys at Law', '1 Riverfront Plz', 'Newark', 'NJ', '07102', null],
  ['@Home Injury Law', '700 Louisiana St', 'Houston', 'TX', '77002', null],
  ['Friedman "The Hammer" Injury Law', '9 Lake Ave', 'Rochester', 'NY', '14608', null],
  ['Castillo-Herrera Law Group', '401 B St', 'San Diego', 'CA', '92101', 'Suite 1500'],
  ['Al-Sayed & Haddad', '1 Woodward Ave', 'Detroit', 'MI', '48226', null],
  ['Jackson & Whitfield Trial Lawyers', '191 Peachtree St NE', 'Atlanta', 'GA', '30303', null],
  ['Lefèvre & Gauthier Avocats', '650 Poydras St', 'New Orleans', 'LA', '70130', null],
  ['Miller, Miller & Miller', '201 N Tryon St', 'Charlotte', 'NC', '28202', null],
  ['Sato Injury Law', '1001 Bishop St', 'Honolulu', 'HI', '96813', null],
  ['Okafor & Adeyemi LLP', '1 Oxford Ctr', 'Pittsburgh', 'PA', '15219', null],
  ['Rosenberg, Feld\nand Klein', '500 E Pratt St', 'Baltimore', 'MD', '21202', null],
  ['Wright Injury Law, Inc.', '1225 17th St', 'Denver', 'CO', '80202', 'Suite 2300'],
  ['Van der Berg & De Vries', '100 N Tampa St', 'Tampa', 'FL', '33602', null],
  ['Esposito Law (Staten Island)', '1200 South Ave', 'Staten Island', 'NY', '10314', null],
  ['Fitzgerald-O’Connell Legal', '60 State St', 'Boston', 'MA', '02109', null],
  // Renamed rather than added: one more firm would change which firm each generated referral picks.
  ['Kim & Park 김앤박 法律事務所', '3435 Wilshire Blvd', 'Los Angeles', 'CA', '90010', 'Suite 2700'],
  ['-Minus Fees Injury Law', '5 Court Sq', 'Long Island City', 'NY', '11101', null],
];

export interface ReferenceData {
  modalities: Modality[];
  bodyParts: BodyPart[];
  bodyPartModalities: Map<string, string[]>;
  cpt: CptMapping[];
  icd10: Icd10Code[];
  lawFirms: LawFirm[];
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

export function buildReferenceData(seed: number): ReferenceData {
  const rand = rng(seed);
  const id = () => uuidFrom(rand);
  const modalities = MODALITIES.map(([name, s]) => ({ id: id(), name, slug: s }));
  const modalityByName = new Map(modalities.map((m) => [m.name, m]));
  const bodyParts = BODY_PARTS.map(([name, lateral]) => ({
    id: id(),
    name,
    slug: slug(name),
    laterality: lateral,
  }));
  const bodyPartByName = new Map(bodyParts.map((b) => [b.name, b]));
  const bodyPartModalities = new Map(BODY_PARTS.map(([name, , mods]) => [name, mods]));
  const modifiers = { RT: id(), LT: id() };

  const cpt: CptMapping[] = [];
  for (const [code, modalityName, parts, contrast, views] of CPT) {
    const modality = modalityByName.get(modalityName)!;
    for (const partName of parts) {
      const part = bodyPartByName.get(partName)!;
      const sides: Array<'left' | 'right' | 'not_present'> = part.laterality
        ? ['right', 'left']
        : ['not_present'];
      for (const side of sides) {
        for (const v of views ?? [null]) {
          const modifier = side === 'right' ? 'RT' : side === 'left' ? 'LT' : null;
          cpt.push({
            id: id(),
            code,
            modality_id: modality.id,
            modality_name: modality.name,
            body_part_id: part.id,
            body_part_name: part.name,
            contrast,
            laterality: side,
            modifier_id: modifier ? modifiers[modifier] : null,
            modifier_name: modifier,
            number_of_views: v,
          });
        }
      }
    }
  }

  const icd10: Icd10Code[] = [];
  for (const [code, description] of ICD10) {
    if (/^[SVW]/.test(code)) {
      for (const [ch, what] of SEVENTH) {
        const full = `${code.padEnd(7, 'X')}${ch}`;
        icd10.push({ id: id(), code: full, short_description: `${description}, ${what}` });
      }
    } else {
      icd10.push({ id: id(), code, short_description: description });
    }
  }

  const lawFirms: LawFirm[] = LAW_FIRMS.map(([name, line1, city, state, zipcode, line2]) => ({
    id: id(),
    name,
    address_line_1: line1,
    address_line_2: line2,
    city,
    state,
    zipcode,
  }));

  return { modalities, bodyParts, bodyPartModalities, cpt, icd10, lawFirms };
}
