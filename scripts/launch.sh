#!/usr/bin/env bash
# Starts one of the programs (server, client, sim, merge, probe) for its root shim. It runs a bundle of
# the TypeScript sources, rebuilt when any source is newer, and `exec`s Node so the pid a
# user sees (for kill -STOP, Ctrl-Z, fg) is the program itself.
set -u
name="$1"
shift
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
if [ ! -d "$root/node_modules/esbuild" ]; then
  echo "$name: dependencies are not installed; run 'npm ci' in $root first" >&2
  exit 1
fi
bundle="$root/node_modules/.cache/thundering-herd/$name.mjs"
# Worker threads start from worker-entry.mjs, built with every program.
if [ ! -f "$bundle" ] || [ ! -f "$(dirname "$bundle")/worker-entry.mjs" ] ||
  [ -n "$(find "$root/src" "$root/package-lock.json" "$root/scripts/bundle.mjs" "$root/scripts/build-program.mjs" -newer "$bundle" -print -quit)" ]; then
  node "$root/scripts/bundle.mjs" "$name" || exit 1
fi
exec node "$bundle" "$@"
