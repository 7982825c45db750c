import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped, plain, widest } from '../../fake-io.js';
import { secretFileFixture, VISIT_EVENT } from '../../webhook-fixture.js';

const sf = secretFileFixture('whsec_command_verify');
const TS = 1_800_000_000;
const now = () => new Date((TS + 12) * 1000);

/** A captured delivery, signed by `webhook sign` itself. */
async function capture(name: string, tamper = false): Promise<string> {
  const text = JSON.stringify(VISIT_EVENT);
  const bodyFile = join(sf.dir.path, `${name}.json`);
  writeFileSync(bodyFile, text);
  const signed = await piped([
    'webhook',
    'sign',
    '--body',
    bodyFile,
    '--secret-file',
    sf.secretFile,
    '--timestamp',
    String(TS),
  ]);
  const headers = signed.stdout.trimEnd().split('\n');
  const sent = tamper ? text.replace('report_uploaded', 'complete') : text;
  const file = join(sf.dir.path, `${name}.http`);
  writeFileSync(
    file,
    [
      'POST /hooks HTTP/1.1',
      'Host: partner.example',
      'Content-Type: application/json',
      ...headers,
      `Content-Length: ${Buffer.byteLength(sent)}`,
      '',
      sent,
    ].join('\r\n'),
  );
  return file;
}

describe('imaging webhook verify', () => {
  it('a good delivery: a one-line verdict and the event summary, exit 0, in both forms', async () => {
    const file = await capture('good');
    const { terminal, piped: p } = await bothForms(
      ['webhook', 'verify', '--request', file, '--secret-file', sf.secretFile],
      {
        deps: { now },
      },
    );
    expect(p.code, p.stderr).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    expect(p.stdout).toBe(
      'valid: signature valid (hex), timestamp 12 s old\n' +
        '  visit.status_changed  event 9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a  visit 1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10  referral R-240001  sent_to_rad -> report_uploaded\n',
    );
    expect(terminal.code).toBe(0);
    expect(plain(terminal.stdout)).toMatch(/^valid: signature valid \(hex\), timestamp 12 s old\n/);
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(terminal.stdout + terminal.stderr + p.stdout + p.stderr).not.toContain('whsec_command_verify');
  });

  it('a changed body fails with exit 8, and says so as JSON too', async () => {
    const file = await capture('tampered', true);
    const r = await piped(['webhook', 'verify', '--request', file, '--secret-file', sf.secretFile], {
      deps: { now },
    });
    expect(r.code).toBe(8);
    expect(r.stdout).toMatch(/^NOT valid: signature does not match \(timestamp 12 s old\)\n/);
    expect(r.stdout).toContain('  - the signature does not match\n');
    const json = await piped(
      ['webhook', 'verify', '--request', file, '--secret-file', sf.secretFile, '--json'],
      {
        deps: { now },
      },
    );
    expect(json.code).toBe(8);
    expect(JSON.parse(json.stdout).valid).toBe(false);
  });

  it('needs a delivery, and --header only with --body', async () => {
    expectUsageError(
      await piped(['webhook', 'verify', '--secret-file', sf.secretFile]),
      /give the delivery with --request FILE/,
      0,
    );
    const file = await capture('h');
    expectUsageError(
      await piped([
        'webhook',
        'verify',
        '--request',
        file,
        '--header',
        'X: y',
        '--secret-file',
        sf.secretFile,
      ]),
      /--header goes with --body/,
      0,
    );
    expectUsageError(
      await piped([
        'webhook',
        'verify',
        '--request',
        file,
        '--tolerance',
        'soon',
        '--secret-file',
        sf.secretFile,
      ]),
      /--tolerance/,
      0,
    );
  });
});
