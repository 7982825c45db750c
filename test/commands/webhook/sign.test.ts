import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signatureHeaderValue } from '../../../src/webhook/sign.js';
import { bothForms, expectUsageError, hasEscapes, piped, plain } from '../../fake-io.js';
import { run } from '../../helpers.js';
import { captureFixture, secretFileFixture, VISIT_EVENT } from '../../webhook-fixture.js';

const sf = secretFileFixture('whsec_command_sign');
const body = () => {
  const file = join(sf.dir.path, 'body.json');
  writeFileSync(file, JSON.stringify(VISIT_EVENT));
  return file;
};
const sign = (...more: string[]) => [
  'webhook',
  'sign',
  '--body',
  body(),
  '--secret-file',
  sf.secretFile,
  '--timestamp',
  '1700000000',
  ...more,
];
const SIGNATURE = /^v1=[0-9a-f]{64}$/;

describe('imaging webhook sign', () => {
  it('prints the three headers of a signed delivery; the signature is never split inside', async () => {
    const { terminal, piped: p } = await bothForms(sign());
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    const [event, timestamp, signature] = p.stdout.trimEnd().split('\n');
    expect(event).toBe('X-Service-Event: visit.status_changed');
    expect(timestamp).toBe('X-Service-Timestamp: 1700000000');
    expect(signature!.replace('X-Service-Signature: ', '')).toMatch(SIGNATURE);
    expect(p.stderr).toBe('');
    expect(terminal.code).toBe(0);
    const value = signature!.slice('X-Service-Signature: '.length);
    expect(plain(terminal.stdout)).toContain(value);
    expect(terminal.stdout + terminal.stderr + p.stdout).not.toContain('whsec_command_sign');
  });

  it('gives the same signature as JSON, and in base64 when asked', async () => {
    const headers = (await piped(sign())).stdout;
    const json = JSON.parse((await piped(sign('--json'))).stdout);
    expect(json).toMatchObject({ event: 'visit.status_changed', timestamp: '1700000000', encoding: 'hex' });
    expect(headers).toContain(`X-Service-Signature: ${json.signature}`);
    const b64 = JSON.parse((await piped(sign('--json', '--encoding', 'base64'))).stdout);
    expect(b64.encoding).toBe('base64');
    expect(Buffer.from(b64.signature.slice(3), 'base64').toString('hex')).toBe(json.signature.slice(3));
  });

  it('refuses a missing body, a body without an event name, or a bad --curl URL', async () => {
    expectUsageError(await piped(['webhook', 'sign', '--secret-file', sf.secretFile]), /--body/, 0);
    const r = await piped(['webhook', 'sign', '--body', '-', '--secret-file', sf.secretFile], {
      stdin: '{}',
    });
    expectUsageError(r, /no event name: the body has no event_name/, 0);
    expectUsageError(await piped(sign('--curl', 'ftp://x')), /--curl/, 0);
  });
});

describe('webhook sign', () => {
  const { SECRET, NOW, TS, files, BODY, sig, capture, write, now } = captureFixture();

  it('prints the three headers', async () => {
    const r = await run([
      'webhook',
      'sign',
      '--body',
      write('sb.json', BODY),
      '--timestamp',
      TS,
      '--secret-file',
      files.secretFile,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `X-Service-Event: visit.status_changed\nX-Service-Timestamp: ${TS}\nX-Service-Signature: ${sig()}\n`,
    );
  });

  it('signs from stdin, with --event and base64, as JSON; the result verifies', async () => {
    const r = await run(
      ['webhook', 'sign', '--body', '-', '--event', 'visit.status_changed', '--encoding', 'base64', '--json'],
      {
        stdin: BODY,
        env: { IMAGING_WEBHOOK_SECRET: SECRET },
        deps: { now },
      },
    );
    const out = JSON.parse(r.stdout);
    expect(out.timestamp).toBe(String(NOW.getTime() / 1000));
    expect(out.signature).toBe(signatureHeaderValue(Buffer.from(SECRET), out.timestamp, BODY, 'base64'));
    const v = await run(
      [
        'webhook',
        'verify',
        '--request',
        write('sv.http', capture(BODY, out.timestamp, out.signature)),
        '--secret-file',
        files.secretFile,
      ],
      {
        deps: { now },
      },
    );
    expect(v.code).toBe(0);
  });

  it('prints a curl command that posts the exact body', async () => {
    const file = write("it's.json", BODY);
    const r = await run([
      'webhook',
      'sign',
      '--body',
      file,
      '--timestamp',
      TS,
      '--secret-file',
      files.secretFile,
      '--curl',
      'http://127.0.0.1:9/hook',
    ]);
    expect(r.stdout).toContain(`-H 'X-Service-Signature: ${sig()}'`);
    expect(r.stdout).toContain(`--data-binary @'${file.replace(/'/g, "'\\''")}'`);
  });

  it('needs an event name and a numeric timestamp', async () => {
    const noName = await run([
      'webhook',
      'sign',
      '--body',
      write('nn.json', '{"a":1}'),
      '--secret-file',
      files.secretFile,
    ]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('--event NAME');
    expect(
      (
        await run([
          'webhook',
          'sign',
          '--body',
          write('ts.json', BODY),
          '--timestamp',
          'now',
          '--secret-file',
          files.secretFile,
        ])
      ).code,
    ).toBe(2);
  });
});
