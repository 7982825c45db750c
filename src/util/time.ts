/**
 * The one time format for people: `2026-01-07 09:00 PST` in the user's zone, sortable and of one
 * width. Data formats keep the API's ISO 8601 text.
 */
export function peopleTime(
  iso: unknown,
  opts: { timeZone?: string | undefined; seconds?: boolean } = {},
): string {
  if (typeof iso !== 'string' || iso === '') return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const fields: Intl.DateTimeFormatOptions = {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    ...(opts.seconds ? { second: '2-digit' } : {}),
    hourCycle: 'h23',
    timeZoneName: 'short',
  };
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { ...fields, timeZone: opts.timeZone || undefined });
  } catch {
    format = new Intl.DateTimeFormat('en-US', fields);
  }
  const p: Record<string, string> = {};
  for (const part of format.formatToParts(d)) p[part.type] = part.value;
  const time = `${p.hour}:${p.minute}${opts.seconds ? `:${p.second}` : ''}`;
  return `${p.year}-${p.month}-${p.day} ${time} ${p.timeZoneName}`;
}
