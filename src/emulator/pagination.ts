const DEFAULT_PER_PAGE = 25;
const MAX_PER_PAGE = 100;

export function paginated<T>(key: string, all: T[], url: URL): Record<string, unknown> {
  const { page, perPage, meta } = pageOf(url, all.length);
  return { [key]: all.slice((page - 1) * perPage, page * perPage), meta };
}

export function pageOf(url: URL, total: number) {
  const page = clampInt(url.searchParams.get('page'), 1, 1, Number.MAX_SAFE_INTEGER);
  const perPage = clampInt(url.searchParams.get('per_page'), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE);
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  return {
    page,
    perPage,
    meta: {
      current_page: page,
      next_page: page < totalPages ? page + 1 : null,
      prev_page: page > 1 ? page - 1 : null,
      total_pages: totalPages,
      total_count: total,
    },
  };
}

function clampInt(value: string | null, fallback: number, min: number, max: number): number {
  if (value === null || !/^\d+$/.test(value)) return fallback;
  return Math.min(max, Math.max(min, Number(value)));
}
