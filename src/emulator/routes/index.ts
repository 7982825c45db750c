import type { Route } from '../types.js';
import { routes as admin } from './admin.js';
import { routes as autoBook } from './auto-book.js';
import { routes as documents } from './documents.js';
import { routes as lawFirms } from './law-firms.js';
import { routes as patients } from './patients.js';
import { routes as payments } from './payments.js';
import { routes as reference } from './reference.js';
import { routes as referrals } from './referrals.js';
import { routes as sandbox } from './sandbox.js';
import { routes as sso } from './sso.js';
import { routes as triggers } from './triggers.js';

/** Every route the emulator serves: a new resource is one file here and one line below. */
export const ROUTES: readonly Route[] = [
  ...reference,
  ...lawFirms,
  ...referrals,
  ...documents,
  ...payments,
  ...autoBook,
  ...patients,
  ...sso,
  ...admin,
  ...triggers,
  ...sandbox,
];
