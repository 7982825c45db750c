import { spawn } from 'node:child_process';

export interface OpenResult {
  /** True only when the opener confirmed: it started and exited 0. */
  opened: boolean;
  /** Why not, in words, when it did not. */
  reason?: string;
}

/** How long an opener may take to say it opened the page (xdg-open and open return at once). */
const CONFIRM_MS = 3000;

/**
 * Opens a URL in the system browser, and says whether that was confirmed: the opener started and
 * exited 0. A command that cannot start, exits non-zero (`BROWSER=false`), is killed, or is still
 * running after a few seconds (a browser that stays in the foreground) is not a confirmation, so
 * the caller prints the URL instead. No opener (a Linux machine with no display) is the same.
 */
export async function openInBrowser(url: string, env: NodeJS.ProcessEnv): Promise<OpenResult> {
  let command: string;
  let args: string[];
  if (env.BROWSER && env.BROWSER.trim() !== '') {
    command = env.BROWSER;
    args = [url];
  } else if (process.platform === 'darwin') {
    command = 'open';
    args = [url];
  } else if (process.platform === 'win32') {
    command = 'rundll32';
    args = ['url.dll,FileProtocolHandler', url];
  } else {
    if (!env.DISPLAY && !env.WAYLAND_DISPLAY)
      return { opened: false, reason: 'there is no display here: DISPLAY and WAYLAND_DISPLAY are unset' };
    command = 'xdg-open';
    args = [url];
  }
  // The command's name only: never its arguments (the URL is a credential).
  const name = `the browser command "${command}"`;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: OpenResult) => {
      if (timer) clearTimeout(timer);
      resolve(result);
    };
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      child.once('error', (err: NodeJS.ErrnoException) =>
        settle({
          opened: false,
          reason:
            err.code === 'ENOENT'
              ? `${name} was not found`
              : `${name} could not start (${err.code ?? err.message})`,
        }),
      );
      child.once('exit', (code, signal) =>
        settle(
          code === 0
            ? { opened: true }
            : {
                opened: false,
                reason: signal ? `${name} was stopped by ${signal}` : `${name} exited with status ${code}`,
              },
        ),
      );
      child.once('spawn', () => {
        child.unref();
        timer = setTimeout(
          () => settle({ opened: false, reason: `${name} did not confirm within ${CONFIRM_MS / 1000} s` }),
          CONFIRM_MS,
        );
      });
    } catch (err) {
      settle({ opened: false, reason: `${name} could not start (${(err as Error).message})` });
    }
  });
}
