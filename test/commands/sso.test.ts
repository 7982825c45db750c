import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockFixture, run, tempDir } from '../helpers.js';

const fx = mockFixture();
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  await fx.start();
  dir = tempDir();
});
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

/** A $BROWSER that records its arguments and what it found at the page it was given, as a browser reads it. */
function browser(
  name: string,
  last = '',
): { command: string; argv: () => string[]; seen: (what: string) => string } {
  const out = join(dir.path, name);
  const command = join(dir.path, `${name}.sh`);
  writeFileSync(
    command,
    `#!/bin/sh
printf '%s\\n' "$@" > '${out}.argv'
f="\${1#file://}"
stat -c %a "$f" > '${out}.mode'
stat -c %a "$(dirname "$f")" > '${out}.dirmode'
cat "$f" > '${out}.page'
${last}
`,
  );
  chmodSync(command, 0o700);
  return {
    command,
    argv: () => readFileSync(`${out}.argv`, 'utf8').trim().split('\n'),
    seen: (what) => readFileSync(`${out}.${what}`, 'utf8').trim(),
  };
}

describe('sso --open', () => {
  it('gives the browser command a private redirect page, never the one-time URL, and removes the page', async () => {
    const b = browser('reads');
    const r = await run(['sso', '--open'], {
      env: fx.env({ IMAGING_TOKEN: 'mock-sso-open', BROWSER: b.command }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Opened the partner portal');
    // What `ps` shows of the browser command: a file in a private folder, no portal URL.
    const argv = b.argv();
    expect(argv).toHaveLength(1);
    expect(argv[0]).toMatch(/^file:\/\/\/.+\/imaging-open-[^/]+\/portal\.html$/);
    expect(argv.join(' ')).not.toContain('/portal/sso/');
    expect(b.seen('mode')).toBe('600');
    expect(b.seen('dirmode')).toBe('700');
    // The page sends the browser on to the portal URL, which still works (once).
    const target = /content="0; url=([^"]+)"/.exec(b.seen('page'))?.[1] ?? '';
    expect(target).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/portal\/sso\/[\w-]+$/);
    expect((await fetch(target)).status).toBe(200);
    // Gone once read: nothing of the URL stays on disk.
    expect(existsSync(argv[0]!.slice('file://'.length))).toBe(false);
  });

  it('removes the page at once and prints the URL when the browser command fails', async () => {
    const b = browser('fails', 'exit 3');
    const r = await run(['sso', '--open'], {
      env: fx.env({ IMAGING_TOKEN: 'mock-sso-fail', BROWSER: b.command }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\/portal\/sso\//);
    expect(r.stderr).toContain('exited with status 3');
    expect(b.seen('mode')).toBe('600');
    expect(existsSync(b.argv()[0]!.slice('file://'.length))).toBe(false);
  });
});
