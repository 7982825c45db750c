import type { Handler, Route } from './types.js';

interface Match {
  route: Route;
  params: Record<string, string>;
}

/** Method + path pattern (`:name` parameters, URI-decoded) -> handler; trailing slashes ignored. */
export function router(routes: readonly Route[]): (method: string, pathname: string) => Match | undefined {
  const table = routes.map((route) => ({ route, segments: split(route.path) }));
  return (method, pathname) => {
    const parts = split(pathname);
    for (const { route, segments } of table) {
      if (route.method !== method || segments.length !== parts.length) continue;
      const ok = segments.every((seg, i) => (seg.startsWith(':') ? parts[i] !== '' : seg === parts[i]));
      if (!ok) continue;
      // A malformed %-escape names nothing here: no route, a 404 (not a 500).
      const params = segments.flatMap((seg, i) =>
        seg.startsWith(':') ? [[seg.slice(1), decoded(parts[i]!)]] : [],
      );
      if (params.some(([, v]) => v === undefined)) return undefined;
      return { route, params: Object.fromEntries(params) };
    }
    return undefined;
  };
}

/** A path segment URI-decoded, or undefined when its %-escapes are malformed. */
export function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function split(path: string): string[] {
  return (path.replace(/\/+$/, '') || '/').split('/');
}

export const route = (method: string, path: string, handler: Handler): Route => ({ method, path, handler });
