import { spawn } from 'node:child_process';

/**
 * Opens a URL in the system browser. Resolves false when there is no browser to open (no
 * opener installed, or a Linux machine with no display), so the caller can print the URL instead.
 */
export async function openInBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
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
    if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return false;
    command = 'xdg-open';
    args = [url];
  }
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
