#!/usr/bin/env bash
# Opens exports in LibreOffice Calc (headless). `spreadsheet-check.sh workbook` (a CI step of its
# own): the Excel workbooks (--format xlsx) converted to CSV by Calc must hold the cells of the CSV
# export of the same data, typed (text quoted, numbers and dates not), names that look like
# formulas still text; exit 1 naming each difference. Without an argument: prints how Calc shows
# CSV exports with and without the formula guard, formula look-alikes, and --bom. Needs
# LibreOffice (Debian: libreoffice-calc-nogui); not part of npm test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT
export IMAGING_CONFIG_DIR="$work/config"
node "$root/bin/imaging.cjs" mock --port 0 --referrals 60 > "$work/url" 2>/dev/null &
mock=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
imaging() { node "$root/bin/imaging.cjs" --env local --base-url "$(cat "$work/url")" "$@"; }

if [ "${1:-}" = workbook ]; then
  command -v soffice > /dev/null || { echo "workbook check skipped: LibreOffice (soffice) is not installed"; exit 0; }
  # Names a spreadsheet would run, a leading-zero ZIP, text that reads as a number.
  echo '{"patient":{"first_name":"=1+1","last_name":"@SUM(1+9)","zip_code":"02134"}}' | imaging referrals create --file - > /dev/null 2>&1
  echo '{"patient":{"first_name":"+2+3","last_name":"=HYPERLINK(\"http://evil.example\",\"x\")"}}' | imaging referrals create --file - > /dev/null 2>&1
  echo '{"patient":{"first_name":"-1","last_name":"0123","phone_number":"+15550100"}}' | imaging referrals create --file - > /dev/null 2>&1
  checks=(
    "export:referrals export --per-page 25"
    "visits:referrals export --rows visit"
    "procedures:referrals export --rows procedure"
    "list:referrals list --per-page 100"
    "firms:law-firms search a --all"
    "icd10:icd10 s8"
  )
  for c in "${checks[@]}"; do
    name=${c%%:*}
    read -r -a args <<< "${c#*:}"
    imaging "${args[@]}" --format xlsx > "$work/$name.xlsx" 2> /dev/null
    imaging "${args[@]}" --format csv --no-formula-guard > "$work/$name.csv" 2> /dev/null
    soffice --headless --convert-to "csv:Text - txt - csv (StarCalc):44,34,76,1" --outdir "$work/calc" "$work/$name.xlsx" > /dev/null 2>&1
  done
  python3 - "$work" "${checks[@]%%:*}" <<'PY'
import csv, datetime, re, sys
work, names = sys.argv[1], sys.argv[2:]
def calc_cells(path):
    """Calc's CSV: rows of (text, quoted); Calc quotes text cells only."""
    data, rows, row, i = open(path, encoding='utf-8').read(), [], [], 0
    while i < len(data):
        if data[i] == '"':
            j, text = i + 1, ''
            while True:
                k = data.index('"', j)
                text += data[j:k]
                if data[k + 1:k + 2] == '"': text += '"'; j = k + 2
                else: i = k + 1; break
            row.append((text, True))
        else:
            m = re.match(r'[^,\r\n]*', data[i:]); row.append((m.group(0), False)); i += len(m.group(0))
        if data[i:i + 2] == '\r\n': i += 2; rows.append(row); row = []
        elif data[i:i + 1] == '\n': i += 1; rows.append(row); row = []
        elif data[i:i + 1] == ',': i += 1
    if row: rows.append(row)
    return rows
ISO = re.compile(r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$')
TEXT = re.compile(r'(^|[._])(id|ids|uuid|code|codes|zip|zipcode|zip_code|postal_code|postcode|reference|number|npi|tin|ein|phone|fax|mobile|accession_ids?)$', re.I)
def shown(value):
    """The CSV export's text as the workbook shows it: a zoned date-time in UTC."""
    if ISO.match(value):
        at = datetime.datetime.fromisoformat(value.replace('Z', '+00:00')).astimezone(datetime.timezone.utc)
        return at.strftime('%Y-%m-%d %H:%M:%S UTC')
    return value
bad = 0
for name in names:
    want = list(csv.reader(open(f'{work}/{name}.csv', encoding='utf-8', newline='')))
    got = calc_cells(f'{work}/calc/{name}.csv')
    header = want[0]
    problems = []
    if len(got) != len(want): problems.append(f'{len(got)} rows in the workbook, {len(want)} in the CSV')
    for r, (w, g) in enumerate(zip(want, got), 1):
        g = g + [('', False)] * (len(w) - len(g))
        for c, (value, (text, quoted)) in enumerate(zip(w, g)):
            col = header[c]
            if r == 1 or value == '':
                if text != value: problems.append(f'row {r} {col}: {text!r}, the CSV has {value!r}')
                continue
            if shown(value) != text and not (value in ('true', 'false') and text.lower() == value):
                problems.append(f'row {r} {col}: Calc shows {text!r}, the CSV has {value!r}')
            elif TEXT.search(col) and not quoted:
                problems.append(f'row {r} {col}: {text!r} is not text')
            elif re.match(r'^[=+\-@]', value) and not quoted:
                problems.append(f'row {r} {col}: {value!r} became a formula or a number')
            elif ISO.match(value) and quoted:
                problems.append(f'row {r} {col}: {value!r} is text, not a date')
    print(f"{name:11} {len(want) - 1:4} rows x {len(header):2} columns: {'same cells as the CSV export' if not problems else f'{len(problems)} DIFFERENCES'}")
    for p in problems[:10]: print('   ', p)
    bad += len(problems)
sys.exit(1 if bad else 0)
PY
  exit $?
fi

echo '{"patient":{"first_name":"+2+3","last_name":"=1+1"}}' | imaging referrals create --file - > /dev/null 2>&1
echo '{"patient":{"first_name":"@SUM(1+9)","last_name":"=HYPERLINK(\"http://evil.example\",\"click\")"}}' | imaging referrals create --file - > /dev/null 2>&1
imaging referrals export -o "$work/guarded.csv" 2> /dev/null
imaging referrals export --no-formula-guard -o "$work/raw.csv" 2> /dev/null
for f in raw guarded; do
  soffice --headless --infilter="CSV:44,34,76,1" --convert-to html --outdir "$work/out" "$work/$f.csv" > /dev/null 2>&1
  echo "== $f.csv as LibreOffice Calc shows the last two patients (first name | last name):"
  python3 - "$work/out/$f.html" <<'PY'
import html, re, sys
rows = re.findall(r'<tr.*?</tr>', open(sys.argv[1], encoding='utf-8', errors='replace').read(), re.S)
for r in rows[-2:]:
    cells = [html.unescape(re.sub('<[^>]+>', '', c)).strip() for c in re.findall(r'<td.*?</td>', r, re.S)]
    print('  ', ' | '.join(cells[7:9]))
PY
done

# Issue 8 item 8: which formula look-alikes does Calc run? One referral per form (the form as the
# first name, a label as the last name), exported with and without the guard; a form "runs" when
# Calc shows something other than the text that was exported.
forms=$(mktemp)
node - "$forms" <<'JS'
const forms = [
  ['ascii =', '=1+1'], ['ascii +', '+1+1'], ['ascii -', '-1+1'], ['ascii @', '@SUM(1+1)'],
  ['tab =', '\t=1+1'], ['space =', ' =1+1'], ['no-break space =', '\u00a0=1+1'],
  ['line feed =', '\n=1+1'], ['zero-width space =', '\u200b=1+1'], ['BOM =', '\ufeff=1+1'],
  ['fullwidth =', '\uff1d1+1'], ['fullwidth +', '\uff0b1+1'], ['fullwidth -', '\uff0d1+1'],
  ['fullwidth @', '\uff20SUM(1+1)'], ['small =', '\ufe661+1'], ['small +', '\ufe621+1'],
  ['small -', '\ufe631+1'], ['minus sign U+2212', '\u22121+1'],
];
require('node:fs').writeFileSync(process.argv[2], JSON.stringify(forms));
JS
for i in $(node -e "console.log(JSON.parse(require('fs').readFileSync('$forms','utf8')).map((_, i) => i).join(' '))"); do
  node -e "const f=JSON.parse(require('fs').readFileSync('$forms','utf8'))[$i]; process.stdout.write(JSON.stringify({patient:{first_name:f[1],last_name:'FORM'+$i}}))" |
    imaging referrals create --file - > /dev/null 2>&1
done
imaging referrals export -o "$work/forms-guarded.csv" 2> /dev/null
imaging referrals export --no-formula-guard -o "$work/forms-raw.csv" 2> /dev/null
for f in forms-raw forms-guarded; do
  soffice --headless --infilter="CSV:44,34,76,1" --convert-to html --outdir "$work/out" "$work/$f.csv" > /dev/null 2>&1
done
echo "== each form: how Calc shows it unguarded (runs?) | guarded (runs?)"
python3 - "$forms" "$work/forms-raw.csv" "$work/out/forms-raw.html" "$work/forms-guarded.csv" "$work/out/forms-guarded.html" <<'PY'
import csv, html, json, re, sys
forms = json.load(open(sys.argv[1], encoding='utf-8'))
def shown(csv_path, html_path):
    exported = {}
    with open(csv_path, encoding='utf-8', newline='') as fh:
        for row in csv.reader(fh):
            if len(row) > 8 and row[8].startswith('FORM'): exported[int(row[8][4:])] = row[7]
    seen = {}
    for r in re.findall(r'<tr.*?</tr>', open(html_path, encoding='utf-8', errors='replace').read(), re.S):
        cells = re.findall(r'<td(.*?)>(.*?)</td>', r, re.S)
        if len(cells) > 8:
            last = html.unescape(re.sub('<[^>]+>', '', cells[8][1])).strip()
            if last.startswith('FORM'):
                attrs, text = cells[7]
                seen[int(last[4:])] = (html.unescape(re.sub('<br/?>', '\n', re.sub(r'<(?!br)[^>]+>', '', text))), 'sdval=' in attrs or 'formula' in attrs.lower())
    return exported, seen
raw_e, raw_s = shown(sys.argv[2], sys.argv[3])
g_e, g_s = shown(sys.argv[4], sys.argv[5])
def verdict(exported, seen, i):
    if i not in seen: return 'missing'
    text, numeric = seen[i]
    runs = numeric or text.strip() != exported.get(i, '').strip()
    return f"{text!r} ({'RUNS' if runs else 'text'})"
for i, (label, value) in enumerate(forms):
    print(f"   {label:20} {verdict(raw_e, raw_s, i):34} | {verdict(g_e, g_s, i)}")
PY
rm -f "$forms"

# Issue 11 item 3: --bom. The same names exported with and without a UTF-8 byte-order mark, opened
# three ways: as UTF-8, with the character set left to Calc, and forced to Windows-1252 (what
# Excel on Windows assumes for a CSV without a BOM). Prints the first header cell (a BOM that
# leaks shows as U+FEFF or "ï»¿") and the accented names as Calc shows them.
imaging referrals export --fields reference,patient_last_name -o "$work/plain.csv" 2> /dev/null
imaging referrals export --fields reference,patient_last_name --bom -o "$work/bom.csv" 2> /dev/null
echo "== --bom: first header cell | accented names, as Calc shows them"
for charset in 76:UTF-8 0:auto 1:Windows-1252; do
  for f in plain bom; do
    rm -rf "$work/outbom"
    soffice --headless --infilter="CSV:44,34,${charset%%:*}" --convert-to html --outdir "$work/outbom" "$work/$f.csv" > /dev/null 2>&1
    python3 - "$work/outbom/$f.html" "${charset#*:}" "$f" <<'PY'
import html, re, sys
cells = [html.unescape(re.sub('<[^>]+>', '', c)).strip() for c in re.findall(r'<td.*?</td>', open(sys.argv[1], encoding='utf-8').read(), re.S)]
names = sorted({c for c in cells if re.search(r'Hern|M.{1,4}ller', c)})
print(f"   {sys.argv[2]:13} {sys.argv[3]:6} {cells[0]!r:22} {', '.join(names)}")
PY
  done
done
