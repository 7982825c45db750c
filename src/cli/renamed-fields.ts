/**
 * Field names a command once had: `--fields` still takes them, for now, as the new name, with one line
 * on stderr, so a script keeps working while it is changed.
 */
export function renamedFields(
  value: string | undefined,
  renamed: Readonly<Record<string, string>>,
  documented: readonly string[],
  note: (line: string) => void,
): string | undefined {
  if (value === undefined) return value;
  return value
    .split(',')
    .map((part) => {
      const name = part.trim();
      const now = Object.hasOwn(renamed, name) ? renamed[name] : undefined;
      if (!now || !documented.includes(now)) return part;
      note(`Note: --fields ${name} is now ${now}; the old name will stop being accepted in a later release`);
      return now;
    })
    .join(',');
}
