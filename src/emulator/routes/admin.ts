import { parseFault } from '../faults.js';
import { jsonBody } from '../reply.js';
import { route } from '../router.js';

export const routes = [
  route('GET', '/__mock/requests', (_c, s) => ({ status: 200, body: s.requests })),
  route('DELETE', '/__mock/requests', (_c, s) => {
    s.requests.length = 0;
    return { status: 204 };
  }),
  route('GET', '/__mock/health', () => ({ status: 200, body: { ok: true } })),
  route('GET', '/__mock/deliveries', (_c, s) => ({ status: 200, body: s.webhooks.log })),
  route('GET', '/__mock/faults', (_c, s) => ({ status: 200, body: s.faults.describe() })),
  route('DELETE', '/__mock/faults', (_c, s) => {
    s.faults.clear();
    return { status: 204 };
  }),
  route('POST', '/__mock/faults', (c, s) => {
    const input = (jsonBody(c) ?? {}) as { fault?: unknown; path?: unknown };
    try {
      const f = parseFault(
        String(input.fault ?? ''),
        typeof input.path === 'string' ? input.path : undefined,
      );
      s.faults.add(f);
      return { status: 201, body: s.faults.describe() };
    } catch (err) {
      return { status: 422, body: { error: (err as Error).message } };
    }
  }),
];
