#!/usr/bin/env bash
# Proof that a change to the simulator's hot path changes nothing it computes: runs a fixed set of
# seeded `./sim -json` runs (every server model, fault kind, deadlines, cancel, shedding, open-loop
# arrivals, client protections, hedging, presets, `-strategies all`, `-find-critical-outage`) and writes
# each run's stdout and its event counts (stderr's "N events", without the timing) to a directory.
# Run it before and after a change and compare the two directories with `diff -r`, or compare
# today's code with the committed record, docs/sim-same-output.json: `npm run validate -- sim-same-output`
# (scripts/sim-same-output-record.ts), which names each figure that changed.
#
# Usage: scripts/sim-same-output.sh OUT_DIR [SIM]
#   SIM: the simulator to run, a bundle (…/sim.mjs, run with node), its source (src/bin/sim.ts, run with
#   node and tsx) or a shim (default: ./sim of this checkout).
set -euo pipefail
out="${1:?usage: scripts/sim-same-output.sh OUT_DIR [SIM]}"
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
sim="${2:-$root/sim}"
mkdir -p "$out"

runs=(
  "exponential|-clients 100000 -limit 3000 -k 1500 -duration 2m -strategies exponential-backoff -seed 11"
  "fixed-stop|-clients 2000 -duration 1m -strategy fixed -seed 1"
  "linear-spike|-clients 2000 -model linear -baseDelay 100ms -slope 1ms -faults spike@20s+5s*2 -duration 1m -strategy full-jitter -seed 2"
  "queue-fifo-bounded-crash|-clients 5000 -model queue -threads 40 -service-time 20ms -queue-limit 500 -faults crash@15s+5s -duration 1m -strategy exponential -seed 3"
  "queue-lifo-lognormal-capacity|-clients 5000 -model queue -threads 40 -service-time 20ms -service-dist lognormal -queue-order lifo -faults capacity@15s+10s*0.5 -duration 1m -strategy equal-jitter -seed 4"
  "queue-exp-slow-cancel|-clients 5000 -model queue -threads 40 -service-time 20ms -service-dist exponential -cancel-on-disconnect -faults slow@15s+10s*3 -duration 1m -strategy decorrelated-jitter -seed 5"
  "errors-fault|-clients 3000 -error-rate 0.05 -faults errors@15s+10s*0.5 -duration 1m -strategy exponential-backoff -max-attempts 4 -seed 6"
  "deadlines|-clients 3000 -propagate-deadline -deadline-aware -duration 1m -strategy exponential -seed 7"
  "cancel-exponential|-clients 3000 -cancel-on-disconnect -duration 1m -strategy fixed -seed 8"
  "shedding-retry-after|-clients 5000 -max-concurrency 200 -retry-after 1s -honor-retry-after -duration 1m -strategy full-jitter -seed 9"
  "open-loop|-arrivals open -rate 400 -duration 1m -strategy exponential -max-attempts 5 -seed 10"
  "protections|-clients 3000 -instances 30 -budget grpc -breaker consecutive -throttle sre -duration 1m -strategy exponential -seed 12"
  "hedging|-clients 3000 -hedge-delay 200ms -max-attempts 3 -duration 1m -seed 16"
  "presets|-clients 2000 -duration 1m -strategies presets -parallel 1 -seed 13"
  "all|-clients 2000 -duration 1m -strategies all -parallel 1 -seed 14"
  "critical-outage|-clients 1000 -duration 1m -strategies fixed,exponential-backoff -find-critical-outage -parallel 1 -seed 15"
)

for run in "${runs[@]}"; do
  name="${run%%|*}"
  read -r -a flags <<<"${run#*|}"
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
