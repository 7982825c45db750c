// Registry tarballs pinned by their sha512: the Node builds in scripts/pins.json, the keychain's
// addon packages in package-lock.json. Each tarball is kept in a cache folder and checked against
// its pin every time it is used, fetched or cached; a mismatch stops the build.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const PINS_FILE = join(root, 'scripts', 'pins.json');

/** The pinned integrity (`sha512-…`) of NAME@VERSION: pins.json, else package-lock.json. */
export function pinOf(name, version) {
  const pins = JSON.parse(readFileSync(PINS_FILE, 'utf8'));
  if (pins[`${name}@${version}`])
    return { integrity: pins[`${name}@${version}`], where: 'scripts/pins.json' };
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const entry = lock.packages?.[`node_modules/${name}`];
  if (entry?.version === version && entry.integrity)
    return { integrity: entry.integrity, where: 'package-lock.json' };
  throw new Error(
    `${name}@${version} has no pinned sha512: add \`npm view ${name}@${version} dist.integrity\` to scripts/pins.json`,
  );
}

const integrityOf = (file) => `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;

/** NAME@VERSION's tarball in `cache`, fetched with `npm pack` when absent, checked against its pin. */
export function pinnedTarball(name, version, cache) {
  const pin = pinOf(name, version);
  const file = join(cache, `${name.replace('/', '+')}-${version}.tgz`);
  if (!existsSync(file)) {
    const tmp = join(cache, `.partial-${process.pid}`);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    console.error(`fetching ${name}@${version} from the registry`);
    const tgz = execFileSync('npm', ['pack', `${name}@${version}`, '--silent', '--pack-destination', tmp], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    verify(join(tmp, tgz), name, version, pin);
    renameSync(join(tmp, tgz), file);
    rmSync(tmp, { recursive: true, force: true });
  }
  verify(file, name, version, pin);
  return file;
}

function verify(file, name, version, pin) {
  const got = integrityOf(file);
  if (got !== pin.integrity)
    throw new Error(
      `${name}@${version}: ${file} is not the tarball pinned in ${pin.where} (sha512 ${got.slice(7, 23)}…, pinned ${pin.integrity.slice(7, 23)}…); refusing to build with it. Delete the file to fetch it again; if the registry serves it so, find out why before changing the pin.`,
    );
}

/** Extracts one file of a package tarball (`package/PATH`) into `dir`, freshly; its path. */
export function extractFile(tgz, path, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['xzf', tgz, '-C', dir, '--strip-components=1', `package/${path}`]);
  return join(dir, path);
}
