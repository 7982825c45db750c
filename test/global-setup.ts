import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** End-to-end tests spawn bin/imaging.cjs, which runs dist/: build it first (esbuild, well under a second). */
export default function setup() {
  execFileSync(process.execPath, ['scripts/build.mjs'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: 'inherit',
  });
}
