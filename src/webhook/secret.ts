import { notYoursAlone, readFileCapped } from '../cli/input.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';

/** A signing secret is tens of bytes; a file bigger than this is not one (or is /dev/zero). */
const MAX_SECRET_BYTES = 64 * 1024;

type SecretFormat = 'raw' | 'base64';

/** The signing key, and what was noticed about it. Its text is never printed. */
export interface Secret {
  key: Buffer;
  text: string;
  format: SecretFormat;
  source: string;
  warnings: string[];
}

interface SecretOptions {
  secretFile?: string | undefined;
  secretFormat?: string | undefined;
}

/** From --secret-file, IMAGING_WEBHOOK_SECRET or a hidden prompt; never a flag (shell history, `ps`). */
export async function loadSecret(ctx: Context, opts: SecretOptions): Promise<Secret> {
  const format = parseSecretFormat(opts.secretFormat);
  let text: string;
  let source: string;
  if (opts.secretFile) {
    checkSecretFile(opts.secretFile);
    const raw = (
      await readFileCapped(opts.secretFile, '--secret-file', MAX_SECRET_BYTES, ctx.signal)
    ).toString('utf8');
    // One trailing newline is how files end; it is not part of the secret.
    text = raw.replace(/\r?\n$/, '');
    source = '--secret-file';
  } else if (ctx.env.IMAGING_WEBHOOK_SECRET !== undefined && ctx.env.IMAGING_WEBHOOK_SECRET !== '') {
    text = ctx.env.IMAGING_WEBHOOK_SECRET;
    source = 'IMAGING_WEBHOOK_SECRET';
  } else if (ctx.io.stdinIsTTY) {
    text = await (await ctx.prompter()).secret('Webhook signing secret:');
    source = 'prompt';
  } else {
    throw new UsageError(
      'no webhook signing secret',
      'Give it with --secret-file FILE or IMAGING_WEBHOOK_SECRET (or run on a terminal to be asked).',
    );
  }
  if (text === '') throw new UsageError(`the webhook secret from ${source} is empty`);
  const warnings: string[] = [];
  if (/\s/.test(text)) {
    const where = /^\s/.test(text) ? 'starts with' : /\s$/.test(text) ? 'ends with' : 'contains';
    warnings.push(
      `the secret from ${source} ${where} white space, which is used as part of the key; check it was copied cleanly`,
    );
  }
  return { key: secretKey(text, format), text, format, source, warnings };
}

function parseSecretFormat(value: string | undefined): SecretFormat {
  const v = (value ?? 'raw').toLowerCase();
  if (v === 'raw' || v === 'base64') return v;
  throw new UsageError(
    `--secret-format: unknown format "${value}"`,
    'Use raw (the UTF-8 bytes, the default) or base64.',
  );
}

export function secretKey(text: string, format: SecretFormat): Buffer {
  if (format === 'raw') return Buffer.from(text, 'utf8');
  const b64 = text.trim().replace(/^whsec_/, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64) || b64.length < 4) {
    throw new UsageError(
      'the secret is not base64 (with --secret-format base64)',
      'Leave --secret-format at raw to use it as given.',
    );
  }
  return Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** As ssh trusts a key file: yours (or root's), writable by no one else, and no other user's symlink. */
function checkSecretFile(path: string): void {
  const problem = notYoursAlone(path, 0o022);
  if (problem)
    throw new UsageError(
      `--secret-file ${path} ${problem.why}; a signing secret is read only from a file that is yours alone`,
      problem.symlink
        ? 'Copy the secret into a file of your own instead of the symlink, then chmod 600 it.'
        : `Make it yours and private: chown "$(id -un)" ${path} && chmod 600 ${path}`,
    );
}
