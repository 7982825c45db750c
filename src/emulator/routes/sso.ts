import { randomBytes } from 'node:crypto';
import { noRoute } from '../reply.js';
import { route } from '../router.js';

const PAGE = { 'content-type': 'text/html' };

/** POST /api/v2/auth/sso mints a one-time link; GET /portal/sso/{token} is the page it opens. */
export const routes = [
  route('POST', '/api/v2/auth/sso', (_c, s) => {
    const token = randomBytes(24).toString('base64url');
    s.ssoTokens.set(token, true);
    return { status: 200, body: { url: `http://127.0.0.1:${s.port}/portal/sso/${token}` } };
  }),

  route('GET', '/portal/sso/:token', (c, s) => {
    const token = c.params.token!;
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return noRoute('GET', c);
    const ok = s.ssoTokens.get(token);
    s.ssoTokens.delete(token);
    return ok
      ? {
          status: 200,
          raw: '<!doctype html><title>Partner portal (emulator)</title><h1>Signed in to the partner portal (emulator)</h1>',
          headers: PAGE,
        }
      : {
          status: 410,
          raw: '<!doctype html><title>Link expired</title><h1>This sign-in link was already used or has expired.</h1>',
          headers: PAGE,
        };
  }),
];
