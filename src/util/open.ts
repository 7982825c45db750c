import { spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { onForcedExit } from './cleanup.js';

interface OpenResult {
  opened: boolean;
  reason?: string;
}

/** How long an opener may take to say it opened the page (xdg-open and open return at once). */
const CONFIRM_MS = 3000;

const READ_WAIT_MS = 10_000;

/**
 * Opens a URL in the system browser; true only when the opener exited 0 in time, else the caller
 * prints the URL. The URL (a credential) never goes on a command line any user can read: the
 * opener gets a private page that redirects to it, removed once read.
 */
export async function openInBrowser(url: string, env: NodeJS.ProcessEnv): Promise<OpenResult> {
  const opener = openerFor(env);
  if (typeof opener === 'string') return { opened: false, reason: opener };
  let page: RedirectPage;
  try {
    page = redirectPage(url);
  } catch (err) {
    return {
      opened: false,
      reason: `the page for the browser could not be written (${(err as Error).message})`,
    };
  }
  const result = await runOpener(opener.command, opener.args(page.url));
  if (result.opened) await page.read(READ_WAIT_MS);
  page.remove();
  return result;
}

function openerFor(env: NodeJS.ProcessEnv): { command: string; args: (target: string) => string[] } | string {
  if (env.BROWSER && env.BROWSER.trim() !== '') return { command: env.BROWSER, args: (t) => [t] };
  if (process.platform === 'darwin') return { command: 'open', args: (t) => [t] };
  if (process.platform === 'win32')
    return { command: 'rundll32', args: (t) => ['url.dll,FileProtocolHandler', t] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY)
    return 'there is no display here: DISPLAY and WAYLAND_DISPLAY are unset';
  return { command: 'xdg-open', args: (t) => [t] };
}

interface RedirectPage {
  url: string;
  read(maxMs: number): Promise<void>;
  remove(): void;
}

/** The page that sends the browser on to `url`: a new 0700 folder of our own, the file 0600. */
function redirectPage(url: string): RedirectPage {
  const dir = mkdtempSync(join(tmpdir(), 'imaging-open-'));
  const file = join(dir, 'portal.html');
  const attr = url.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0; url=${attr}"><title>Partner portal</title><a href="${attr}">Open the partner portal</a>\n`;
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    unregister();
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {}
  };
  const unregister = onForcedExit(remove, false);
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
  try {
    const fd = openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      writeFileSync(fd, html);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    remove();
    throw err;
  }
  return {
    url: pathToFileURL(file).href,
    remove,
    async read(maxMs) {
      // A read moves the access time past the last write (Linux's relatime does that much); where
      // access times are not kept, the page waits out maxMs.
      const deadline = Date.now() + maxMs;
      while (Date.now() < deadline) {
        try {
          const st = statSync(file, { bigint: true });
          if (st.atimeNs > st.mtimeNs) return;
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

function runOpener(command: string, args: string[]): Promise<OpenResult> {
  // The command's name only: never its arguments.
  const name = `the browser command "${command}"`;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: OpenResult) => {
      clearTimeout(timer);
      resolve(result);
    };
    const failed = (reason: string) => settle({ opened: false, reason });
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      child.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') failed(`${name} was not found`);
        else failed(`${name} could not start (${err.code ?? err.message})`);
      });
      child.once('exit', (code, signal) => {
        if (code === 0) settle({ opened: true });
        else failed(signal ? `${name} was stopped by ${signal}` : `${name} exited with status ${code}`);
      });
      child.once('spawn', () => {
        child.unref();
        timer = setTimeout(() => failed(`${name} did not confirm within ${CONFIRM_MS / 1000} s`), CONFIRM_MS);
      });
    } catch (err) {
      failed(`${name} could not start (${(err as Error).message})`);
    }
  });
}
