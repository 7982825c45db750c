import type { Handler, Route } from './types.js';

interface Match {
  route: Route;
  params: Record<string, string>;
}

/** Method + path pattern (`:name` parameters, URI-decoded) -> handler; trailing slashes ignored. */
export class Router {
  private readonly routes: Array<{ route: Route; segments: string[] }> = [];

  add(...routes: Route[]): this {
    for (const route of routes) this.routes.push({ route, segments: split(route.path) });
    return this;
  }

  match(method: string, pathname: string): Match | undefined {
    const parts = split(pathname);
    for (const { route, segments } of this.routes) {
      if (route.method !== method || segments.length !== parts.length) continue;
      const raw: Array<[string, string]> = [];
      const ok = segments.every((seg, i) => {
        const part = parts[i]!;
        if (!seg.startsWith(':')) return seg === part;
        raw.push([seg.slice(1), part]);
        return part !== '';
      });
      // A malformed %-escape throws here, as a 500, like any other fault of a handler.
      if (ok) return { route, params: Object.fromEntries(raw.map(([k, v]) => [k, decodeURIComponent(v)])) };
    }
    return undefined;
  }
}

function split(path: string): string[] {
  return (path.replace(/\/+$/, '') || '/').split('/');
}

export const route = (method: string, path: string, handler: Handler): Route => ({ method, path, handler });
