#!/usr/bin/env bash
# Opens an export in LibreOffice Calc (headless) with and without the formula guard and prints how
# Calc shows two patient names that are formulas. Needs LibreOffice (Debian: libreoffice-calc-nogui);
# not part of npm test, so CI does not need it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT
export IMAGING_CONFIG_DIR="$work/config"
node "$root/bin/imaging.cjs" mock --port 0 --referrals 2 > "$work/url" 2>/dev/null &
mock=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
imaging() { node "$root/bin/imaging.cjs" --env local --base-url "$(cat "$work/url")" "$@"; }
echo '{"patient":{"first_name":"+2+3","last_name":"=1+1"}}' | imaging referrals create --file - > /dev/null 2>&1
echo '{"patient":{"first_name":"@SUM(1+9)","last_name":"=HYPERLINK(\"http://evil.example\",\"click\")"}}' | imaging referrals create --file - > /dev/null 2>&1
imaging referrals export -o "$work/guarded.csv" 2> /dev/null
imaging referrals export --no-formula-guard -o "$work/raw.csv" 2> /dev/null
for f in raw guarded; do
  soffice --headless --convert-to html --outdir "$work/out" "$work/$f.csv" > /dev/null 2>&1
  echo "== $f.csv as LibreOffice Calc shows the last two patients (first name | last name):"
  python3 - "$work/out/$f.html" <<'PY'
import html, re, sys
rows = re.findall(r'<tr.*?</tr>', open(sys.argv[1], encoding='utf-8', errors='replace').read(), re.S)
for r in rows[-2:]:
    cells = [html.unescape(re.sub('<[^>]+>', '', c)).strip() for c in re.findall(r'<td.*?</td>', r, re.S)]
    print('  ', ' | '.join(cells[7:9]))
PY
done
