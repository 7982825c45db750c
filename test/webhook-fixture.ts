import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './helpers.js';

/** A visit.status_changed event of the spec's shape, shared by the webhook test files. */
export const VISIT_EVENT = {
  event_id: '9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a',
  event_name: 'visit.status_changed',
  status: 'report_uploaded',
  changes: { status: ['sent_to_rad', 'report_uploaded'] },
  visit_id: '1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10',
  occurred_at: '2026-11-21T19:00:00Z',
  referral: {
    id: '3212c76a-c27e-4ca2-9e90-bb9c865c1630',
    reference: 'R-240001',
    visits: [{ id: '1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10' }],
  },
};

/** A temporary folder holding the secret in a file (with the trailing newline editors add). */
export function secretFileFixture(secret: string) {
  const fx = { dir: undefined as unknown as ReturnType<typeof tempDir>, secretFile: '' };
  beforeAll(() => {
    fx.dir = tempDir();
    fx.secretFile = join(fx.dir.path, 'secret.txt');
    writeFileSync(fx.secretFile, `${secret}\n`);
  });
  afterAll(() => fx.dir.cleanup());
  return fx;
}
