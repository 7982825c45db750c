import { NAME_MAX } from '../util/hidden-name.js';

/** Why a write failed, in words, without the temporary path Node puts in its messages. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const words: Record<string, string> = {
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    EFBIG: 'file too large for this file system',
    EIO: 'input/output error (the disk or device failed)',
    EPIPE: 'the reader went away (broken pipe)',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'read-only file system',
    ENOENT: 'no such folder',
    ENOTDIR: 'no such folder',
    ENXIO: 'nothing is reading it (no such device or address)',
    ENAMETOOLONG: `the name is too long (a file name can be at most ${NAME_MAX} bytes, a whole path 4096)`,
  };
  return words[e?.code ?? ''] ?? String(e?.message ?? err).replace(/, \w+ '[^']*'(?: -> '[^']*')?$/, '');
}
