#!/usr/bin/env bash
# Builds the standalone binary dist/ingress-controller with `deno compile`.
# deno compile needs Deno's runtime binary (denort); it downloads it unless DENORT_BIN names a
# local copy (deno reads DENORT_BIN itself). Without either it fails, and this script says why in
# one line. It never produces anything but the real compiled binary.
set -uo pipefail
cd "$(dirname "$0")"

if command -v deno >/dev/null 2>&1; then
  DENO=(deno)
else
  DENO=(npx -y deno@2.9.6)
fi

out="${OUT:-dist/ingress-controller}"
mkdir -p "$(dirname "$out")"
args=(compile -A --output "$out")
# Files read or imported at run time (not found by static analysis).
[ -d templates ] && args+=(--include templates)
# Worker modules (new Worker(new URL(...))) are not part of the static module graph.
args+=(--include lib/admission/review_worker.ts)

if [ -n "${DENORT_BIN:-}" ] && [ ! -x "$DENORT_BIN" ]; then
  echo "compile.sh: DENORT_BIN=$DENORT_BIN is not an executable file; point it at denort 2.9.6 for this platform" >&2
  exit 1
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if "${DENO[@]}" "${args[@]}" main.ts >"$log" 2>&1; then
  cat "$log"
  echo "compile.sh: built $out"
  exit 0
fi
if grep -qE "dl\.deno\.land|denort|Setting up base binary" "$log"; then
  echo "compile.sh: deno compile could not download its runtime binary (denort) because this machine cannot reach dl.deno.land; set DENORT_BIN to a local denort 2.9.6 binary and rerun" >&2
  exit 1
fi
cat "$log" >&2
echo "compile.sh: deno compile failed (see above)" >&2
exit 1
