import { fstatSync } from 'node:fs';

/**
 * Whether descriptor `fd` is a terminal: `tty.isatty(fd)`, without loading `node:tty` when the
 * answer is plainly no. A terminal is a character device, so a pipe, a regular file or a socket
 * (what a script gives) is answered from one fstat; only a character device (a terminal, or
 * /dev/null) is asked of node:tty. Loading node:tty (and its internal/tty) at every start was
 * ~0.3 ms and ~11 KB of the young heap that decides whether a lookup needs a garbage collection
 * (README "Speed"). Windows is always asked of node:tty (its console is no POSIX device); a closed
 * or unreadable descriptor is not a terminal, as for isatty.
 */
export function isTerminal(fd: number): boolean {
  if (process.platform !== 'win32') {
    try {
      if (!fstatSync(fd).isCharacterDevice()) return false;
    } catch {
      return false;
    }
  }
  return process.getBuiltinModule('node:tty').isatty(fd);
}
