import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, mockFixture, spawnCli } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

describe('the built binary', () => {
  it('prints its version', async () => {
    const r = await spawnCli(['--version']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('looks up a CPT code against the emulator', async () => {
    const r = await spawnCli(['cpt', '73721', '--json'], { env: fx.env() });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(6);
  });

  it('shows one clear error and no stack trace', async () => {
    const r = await spawnCli(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-expired' }) });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/^error: Sandbox API token has expired\n/);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('stops quietly when the reader of its output goes away', async () => {
    const r = await spawnCli(['icd10', '--all', '--format', 'ndjson'], { env: fx.env() });
    expect(r.exitCode).toBe(0);
    const piped = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'icd10', '--all', '--format', 'ndjson'], {
        env: { ...fx.env(), PATH: process.env.PATH },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(piped.stderr).not.toContain('EPIPE');
    expect(piped.code).toBe(0);
  });

  it('runs the emulator, prints its URL on stdout, and stops on SIGINT with 130', async () => {
    const child = spawn(process.execPath, [BIN, 'mock', '--port', '0'], { env: { PATH: process.env.PATH } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve) =>
      child.stdout.once('data', (d) => resolve(String(d).trim())),
    );
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/api/v2/modalities`, { headers: { authorization: 'Bearer mock-token' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const code = await new Promise<number | null>((resolve) => {
      child.on('close', (c) => resolve(c));
      child.kill('SIGINT');
    });
    expect(code).toBe(130);
    expect(stderr).toContain('emulator listening on');
  });
});

describe('the package', () => {
  it('declares an imaging binary that exists and runs', async () => {
    const { readFileSync, statSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { ROOT } = await import('../helpers.js');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    const bin = join(ROOT, pkg.bin.imaging!);
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    const { execa } = await import('execa');
    const r = await execa(process.execPath, [bin, '--version'], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
