import { describe, expect, it } from 'vitest';
import { parseErrorBody, parseRetryAfter } from '../../src/api/errors.js';
import { ApiError, exitCodeForStatus, formatError, UsageError } from '../../src/errors.js';
import { clean } from '../../src/output/text.js';

const parse = (status: number, body: string, headers: Record<string, string> = {}) =>
  parseErrorBody(status, headers, Buffer.from(body), clean);

describe('parseErrorBody', () => {
  it('reads the full envelope', () => {
    const d = parse(
      422,
      JSON.stringify({
        error: 'Validation failed',
        message: 'Validation failed',
        type: 'validation_error',
        code: 'unprocessable_entity',
        request_id: 'req_1',
        documentation_url: 'https://docs.test/e',
        errors: ["Name can't be blank", 'State is invalid'],
      }),
      { 'x-request-id': 'req_header' },
    );
    expect(d).toMatchObject({
      status: 422,
      code: 'unprocessable_entity',
      type: 'validation_error',
      message: 'Validation failed',
      requestId: 'req_1',
      documentationUrl: 'https://docs.test/e',
      errors: ["Name can't be blank", 'State is invalid'],
    });
  });
  it('reads a bare { error } body and takes the request id from the header', () => {
    const d = parse(400, '{"error":"param is missing: code"}', { 'x-request-id': 'req_h' });
    expect(d.message).toBe('param is missing: code');
    expect(d.requestId).toBe('req_h');
    expect(d.code).toBeUndefined();
  });
  it('explains an HTML page from a proxy, with its title', () => {
    const d = parse(502, '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>', {
      'content-type': 'text/html',
    });
    expect(d.bodyNote).toMatch(/HTML page \("502 Bad Gateway"\).*proxy/);
  });
  it('explains truncated JSON', () => {
    expect(parse(500, '{"error":"Inter').bodyNote).toMatch(/truncated or malformed JSON/);
  });
  it('explains an empty body', () => {
    expect(parse(503, '').bodyNote).toMatch(/empty response body/);
  });
  it('escapes terminal control characters in server text visibly', () => {
    expect(parse(422, JSON.stringify({ message: 'bad\u001b[31m red\u0007' })).message).toBe(
      'bad\u241b[31m red\u2407',
    );
  });
  it('reads Retry-After in seconds and as a date', () => {
    expect(parse(429, '{}', { 'retry-after': '7' }).retryAfterSeconds).toBe(7);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('exit codes', () => {
  it.each([
    [401, 3],
    [403, 5],
    [404, 4],
    [429, 6],
    [400, 7],
    [422, 7],
    [409, 7],
    [500, 1],
    [502, 1],
  ])('HTTP %i -> exit %i', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });
});

describe('formatError', () => {
  it('shows status, code, errors, request id and a hint for an API error', () => {
    const text = formatError(
      new ApiError({
        status: 422,
        method: 'POST',
        url: 'https://x.test/api/v2/law_firms',
        code: 'unprocessable_entity',
        message: 'Validation failed',
        errors: ["City can't be blank"],
        requestId: 'req_9',
      }),
    );
    expect(text).toContain('error: Validation failed');
    expect(text).toContain('422 Unprocessable Entity');
    expect(text).toContain("- City can't be blank");
    expect(text).toContain('request id: req_9');
  });
  it('never prints a stack for an unexpected error unless verbose', () => {
    const err = new TypeError('boom');
    expect(formatError(err)).not.toContain('    at ');
    expect(formatError(err, { verbose: true })).toContain('    at ');
  });
  it('prints a usage error with its hint', () => {
    expect(formatError(new UsageError('bad', 'do this'))).toBe('error: bad\nhint: do this');
  });
});

describe('Ctrl-C at a prompt', () => {
  it('is an interrupt (exit 130) whether inquirer or readline was asking', async () => {
    const { interruptedIfCtrlC } = await import('../../src/cli/prompt.js');
    const { InterruptedError } = await import('../../src/errors.js');
    const inquirer = Object.assign(new Error('User force closed the prompt'), { name: 'ExitPromptError' });
    const readline = Object.assign(new Error('Aborted with Ctrl+C'), {
      name: 'AbortError',
      code: 'ABORT_ERR',
    });
    for (const err of [inquirer, readline]) {
      const mapped = interruptedIfCtrlC(err);
      expect(mapped).toBeInstanceOf(InterruptedError);
      expect((mapped as InstanceType<typeof InterruptedError>).exitCode).toBe(130);
    }
    const other = new Error('disk full');
    expect(interruptedIfCtrlC(other)).toBe(other);
  });
});

describe('the error block on a terminal', () => {
  it('colours error: and hint: (chalk) on a colour terminal, and is plain piped or with NO_COLOR', async () => {
    const { run } = await import('../helpers.js');
    const args = ['cpt', '12'];
    const tty = await run(args, { stderrIsTTY: true });
    expect(tty.code).toBe(2);
    expect(tty.stderr).toMatch(
      /^\u001b\[31m\u001b\[1merror:\u001b\[22m\u001b\[39m "12" is not a CPT or HCPCS code\n/,
    );
    expect(tty.stderr).toContain('\u001b[33mhint:\u001b[39m');
    for (const opts of [{}, { stderrIsTTY: true, env: { NO_COLOR: '1' } }]) {
      const plain = await run(args, opts);
      expect(plain.stderr).toMatch(/^error: "12" is not a CPT or HCPCS code\nhint: /);
      expect(plain.stderr).not.toContain('\u001b');
    }
  });
});
