#!/usr/bin/env bash
# Proof that a change to the simulator's hot path changes nothing it computes: runs a fixed set of
# seeded `./sim -json` runs (every server model, fault kind, deadlines, cancel, shedding, open-loop
# arrivals, client protections, hedging, presets, `-strategies all`, `-find-critical-outage`) and writes
# each run's stdout and its event counts (stderr's "N events", without the timing) to a directory.
# Run it before and after a change and compare the two directories with `diff -r`. The runs are
# listed in scripts/sim-same-output.runs; test/fixtures/sim-same-output/ holds their committed output,
# which test/unit/sim/same-output.test.ts (npm test) compares with today's, in process. A change
# meant to change what the simulator computes regenerates it, and its commit says why each run moved:
#
#   scripts/sim-same-output.sh test/fixtures/sim-same-output
#
# Usage: scripts/sim-same-output.sh OUT_DIR [SIM]
#   SIM: the simulator to run, a bundle (…/sim.mjs, run with node), its source (src/bin/sim.ts, run with
#   node and tsx) or a shim (default: ./sim of this checkout).
set -euo pipefail
out="${1:?usage: scripts/sim-same-output.sh OUT_DIR [SIM]}"
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
sim="${2:-$root/sim}"
mkdir -p "$out"

runs=()
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] || runs+=("$line")
done <"$root/scripts/sim-same-output.runs"

for run in "${runs[@]}"; do
  name="${run%%|*}"
  flags_and_tag="${run#*|}"
  read -r -a flags <<<"${flags_and_tag%%|*}"
  if [[ "$sim" == *.mjs ]]; then command=(node "$sim"); elif [[ "$sim" == *.ts ]]; then command=(node --import "$root/src/register-tsx.mjs" "$sim"); else command=("$sim"); fi
  status=0
  "${command[@]}" "${flags[@]}" -json -quiet >"$out/$name.json" 2>"$out/$name.stderr" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "sim-same-output: $name failed (exit $status): see $out/$name.stderr" >&2
    exit 1
  fi
  # The event counts are the simulator's measure of work: equal counts, the same events fired.
  grep -o '[0-9]* events' "$out/$name.stderr" >"$out/$name.events" || true
  rm "$out/$name.stderr"
  echo "$name: $(sha256sum <"$out/$name.json" | cut -c1-16) $(tr '\n' ' ' <"$out/$name.events")"
done
