import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectUsageError, piped } from '../../fake-io.js';
import { secretFileFixture } from '../../webhook-fixture.js';

const sf = secretFileFixture('whsec_command_sample');

describe('imaging webhook sample', () => {
  it('prints a bare event body that webhook sign signs and webhook verify accepts', async () => {
    const r = await piped(['webhook', 'sample', 'visit.status_changed', '--set', 'status=booked']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.endsWith('}\n')).toBe(true);
    expect(r.stdout.trimEnd()).not.toContain('\n');
    const event = JSON.parse(r.stdout);
    expect(event).toMatchObject({ event_name: 'visit.status_changed', status: 'booked' });

    const bodyFile = join(sf.dir.path, 'sample.json');
    writeFileSync(bodyFile, r.stdout);
    const signed = await piped(['webhook', 'sign', '--body', bodyFile, '--secret-file', sf.secretFile]);
    expect(signed.code).toBe(0);
    const headers = signed.stdout
      .trimEnd()
      .split('\n')
      .flatMap((h) => ['--header', h]);
    const verified = await piped([
      'webhook',
      'verify',
      '--body',
      bodyFile,
      ...headers,
      '--secret-file',
      sf.secretFile,
      '--json',
    ]);
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ valid: true });
  });

  it('warns when --set leaves the spec shape, and refuses an unknown event before anything', async () => {
    const r = await piped(['webhook', 'sample', 'visit.status_changed', '--set', 'visit_id=7']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).visit_id).toBe(7);
    expect(r.stderr).toMatch(/warning: after --set/);
    expectUsageError(await piped(['webhook', 'sample', 'visit.nope']), /unknown event "visit.nope"/, 0);
  });

  it('--set with an integer a double cannot hold keeps its digits', async () => {
    const r = await piped([
      'webhook',
      'sample',
      'visit.status_changed',
      '--set',
      'referral.wc_number=12345678901234567890',
      '--set',
      'referral.n=42',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"wc_number":"12345678901234567890"');
    expect(r.stdout).toContain('"n":42');
  });
});
