#!/usr/bin/env bash
# Two of the three ways to install, as a user would, for .ci/run (outside npm test):
#   scripts/check-install.sh npm      npm pack -> npm install -g into an empty prefix -> imaging --help,
#                                     a lookup against the emulator, man imaging, completion; then
#                                     with a node_modules planted in a parent folder of the prefix:
#                                     a proxied lookup, an xlsx export, a keychain read
#   scripts/check-install.sh binary   npm run package -- --target linux-x64, its checksum, then on a
#                                     PATH with no node: --version, a lookup, an export to a file,
#                                     webhook verify, completion bash, against `imaging mock` run by
#                                     the same binary; then test/guarantees/install.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/imaging-install-XXXXXX")
mock_pid=
cleanup() {
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export IMAGING_CONFIG_DIR="$work/config" IMAGING_CACHE_DIR="$work/cache" NO_COLOR=1
fail() {
  echo "check-install: $*" >&2
  exit 1
}
step() { echo "  ok: $*"; }

# Starts `imaging mock` (the command given) on a free port; sets $url.
start_mock() {
  "$@" mock --port 0 >"$work/mock.out" 2>/dev/null &
  mock_pid=$!
  for _ in $(seq 100); do
    url=$(head -n 1 "$work/mock.out" 2>/dev/null || true)
    [ -n "$url" ] && return 0
    sleep 0.05
  done
  fail "imaging mock printed no URL"
}

# A TAB after "imaging refe" in real bash, through the script `imaging completion bash` prints.
bash_completes() {
  "$1" completion bash >"$work/complete.bash"
  bash --norc -c "source '$work/complete.bash'
    COMP_WORDS=(imaging refe); COMP_CWORD=1; COMPREPLY=()
    _imaging_complete imaging refe imaging
    printf '%s\n' \"\${COMPREPLY[@]}\"" | grep -qx 'referrals' || fail "bash completion did not offer referrals"
}

check_npm() {
  npm pack --silent --pack-destination "$work" >/dev/null
  local tgz
  tgz=$(ls "$work"/partner-imaging-cli-*.tgz)
  echo "  package: $(basename "$tgz"), $(du -k "$tgz" | cut -f1) KB packed"
  tar tzf "$tgz" | grep -Eq '^package/(dist/bin/|src/|test/)|\.map$' && fail "the package holds what it should not"
  npm_config_prefix="$work/prefix" npm install -g --no-audit --no-fund "$tgz" >/dev/null
  local prefix_bin="$work/prefix/bin"
  PATH="$prefix_bin:$PATH"
  [ "$(command -v imaging)" = "$prefix_bin/imaging" ] || fail "imaging is not the prefix's"
  imaging --version | grep -Eq '^[0-9.]+ \(npm, Node v[0-9.]+, linux-x64\)$' || fail "--version: $(imaging --version)"
  imaging --help | grep -qx "Docs: $work/prefix/lib/node_modules/partner-imaging-cli/README.md" ||
    fail "--help names no README in the package"
  step "npm install -g into an empty prefix, imaging --help and --version"
  start_mock imaging
  imaging --env local --base-url "$url" cpt 73721 --json | grep -q '"code": "73721"' || fail "the lookup"
  step "a lookup against the emulator"
  # man-db finds PREFIX/share/man from PREFIX/bin on PATH, where npm links the `man` field's page.
  command -v man >/dev/null || fail "no man (man-db) on this machine"
  MANPAGER=cat MANWIDTH=80 man imaging 2>/dev/null | grep -q '^IMAGING(1)' || fail "man imaging"
  step "man imaging ($(man -w imaging))"
  bash_completes imaging
  step "completion bash"
  check_planted
}

# The prefix is inside $work, where another user could have made $work/node_modules: Node looks
# there for any package the tool loads and has not installed. Every optional package its
# dependencies try to load is planted, each leaving a mark if it runs.
check_planted() {
  local planted="$work/node_modules" marks="$work/planted.log" name
  local names=(supports-color kerberos @napi-rs/keyring @napi-rs/keyring-wasm32-wasi)
  names+=($(grep -o "require('@napi-rs/keyring-[a-z0-9-]*')" \
    "$work/prefix/lib/node_modules/partner-imaging-cli/node_modules/@napi-rs/keyring/index.js" | cut -d"'" -f2 | sort -u))
  for name in "${names[@]}"; do
    mkdir -p "$planted/$name"
    echo "require('fs').appendFileSync('$marks', 'ran $name\\n')" >"$planted/$name/index.js"
  done
  : >"$marks"
  # A proxy that is never reached (its port refuses): the proxy agent loads all the same.
  HTTPS_PROXY=http://127.0.0.1:9 NODE_DEBUG=module imaging --env local --base-url https://api.partner.test cpt 73721 \
    >/dev/null 2>"$work/debug.log" || true
  NODE_DEBUG=module imaging --env local --base-url "$url" referrals export -o "$work/referrals.xlsx" 2>>"$work/debug.log" ||
    fail "the xlsx export"
  # A token in the keychain, read where npm --omit=optional left no addon package for this platform.
  rm -rf "$work/prefix/lib/node_modules/partner-imaging-cli/node_modules/@napi-rs/keyring-"*
  mkdir -p "$work/config"
  echo '{"environments":{"local":{"token_store":"keychain"}}}' >"$work/config/config.json"
  NODE_DEBUG=module imaging --env local --base-url "$url" cpt 73721 >/dev/null 2>>"$work/debug.log" || true
  rm "$work/config/config.json"
  [ -s "$marks" ] && fail "code planted in $planted ran: $(tr '\n' ' ' <"$marks")"
  grep -q "load \"$planted/" "$work/debug.log" && fail "a module was loaded from $planted"
  step "a proxied lookup, an xlsx export and a keychain read load nothing from $planted"
}

check_binary() {
  local t0=$SECONDS
  # postject's ELF writer warns of note sections it cannot name: harmless (Node's docs say so).
  npm run --silent package -- --target linux-x64 >"$work/package.log" 2>&1 || {
    cat "$work/package.log"
    fail "npm run package failed"
  }
  grep -v "^warning: Can't find string offset" "$work/package.log" || true
  local exe="$root/dist/bin/imaging-linux-x64"
  [ -x "$exe" ] || fail "npm run package built no $exe"
  (cd dist/bin && sha256sum --quiet -c imaging-linux-x64.sha256) || fail "the checksum"
  step "npm run package -- --target linux-x64 ($((SECONDS - t0)) s, $(du -m "$exe" | cut -f1) MB), sha256 checked"
  # A PATH with the binary (as `imaging`) and the few tools this script uses: no node.
  local bin="$work/nodeless" tool
  mkdir -p "$bin"
  cp "$exe" "$bin/imaging"
  for tool in bash cat grep head seq sleep; do ln -s "$(command -v "$tool")" "$bin/$tool"; done
  (
    PATH=$bin
    trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null' EXIT
    command -v node >/dev/null && fail "node is on the PATH"
    imaging --version | grep -Eq '^[0-9.]+ \(standalone, Node v24\.[0-9.]+, linux-x64\)$' ||
      fail "--version: $(imaging --version)"
    step "--version: $(imaging --version)"
    start_mock imaging
    imaging --env local --base-url "$url" cpt 73721 --json | grep -q '"code": "73721"' || fail "the lookup"
    step "a lookup against imaging mock, run by the same binary"
    imaging --env local --base-url "$url" referrals export -o "$work/referrals.csv" 2>/dev/null
    head -n 1 "$work/referrals.csv" | grep -q '^referral_id,reference,' || fail "the export's file"
    step "referrals export -o FILE"
    # A workbook: exceljs inlined into the binary must not bring Node's Buffer() warning with it.
    imaging --env local --base-url "$url" referrals export -o "$work/referrals.xlsx" 2>"$work/xlsx.err"
    grep -q 'Warning' "$work/xlsx.err" && fail "the workbook export warned: $(cat "$work/xlsx.err")"
    [ -s "$work/referrals.xlsx" ] || fail "the workbook's file"
    step "referrals export -o FILE.xlsx, with no warning"
    umask 077
    printf 'whsec_check' >"$work/secret.txt"
    imaging webhook sample visit.status_changed >"$work/event.json"
    {
      imaging webhook sign --body "$work/event.json" --secret-file "$work/secret.txt"
      echo
      cat "$work/event.json"
    } >"$work/delivery.http"
    imaging webhook verify --request "$work/delivery.http" --secret-file "$work/secret.txt" | grep -q '^valid:' ||
      fail "webhook verify"
    step "webhook sign, then verify"
    bash_completes imaging
    step "completion bash"
  )
  npx vitest run test/guarantees/install.test.ts </dev/null
}

case "${1:-}" in
  npm) check_npm ;;
  binary) check_binary ;;
  *) fail "usage: scripts/check-install.sh npm|binary" ;;
esac
