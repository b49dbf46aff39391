#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds, then runs cltrace end to end on
# a built-in workload and shows what each tool sees.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
bin=build/bin
out=build/demo
mkdir -p "$out"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "import a hand-written command-list repro (corpus/jsonl/recycle.jsonl) into a trace"
$bin/cltrace import corpus/jsonl/recycle.jsonl -o "$out/recycle.cltrace"

step "cltrace info"
$bin/cltrace info "$out/recycle.cltrace"

step "cltrace dump --count 12"
$bin/cltrace dump "$out/recycle.cltrace" --count 12

step "cltrace export (round trip back to JSONL)"
$bin/cltrace export "$out/recycle.cltrace" -o "$out/recycle.jsonl"
if cmp -s <($bin/cltrace export "$out/recycle.cltrace" -o -) "$out/recycle.jsonl"; then
  echo "export is stable: $out/recycle.jsonl"
fi
