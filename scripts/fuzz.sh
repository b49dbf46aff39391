#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cc) with clang into build-fuzz/ and runs each
# for a short time, seeded from corpus/fuzz/<target>/ and the traces in corpus/.
# Usage: scripts/fuzz.sh [--seconds N]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=30
if [[ "${1:-}" == "--seconds" ]]; then seconds="$2"; fi
scripts/deps.sh --fuzz
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz "${generator[@]}" -DCLTRACE_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build-fuzz -j "$(nproc)"
status=0
for f in build-fuzz/bin/*_fuzz; do
  [[ -x "$f" ]] || continue
  name=$(basename "$f" _fuzz)
  work="build-fuzz/work/$name"
  mkdir -p "$work"
  seeds=()
  [[ -d "corpus/fuzz/$name" ]] && seeds+=("corpus/fuzz/$name")
  [[ "$name" == "jsonl" ]] && seeds+=("corpus/jsonl" "corpus/check")
  echo "fuzz: $name for ${seconds}s"
  if ! "$f" -max_total_time="$seconds" -print_final_stats=0 -artifact_prefix="$work/" \
      "$work" "${seeds[@]}" > "$work/log.txt" 2>&1; then
    echo "fuzz: $name FAILED; crash input and log in $work" >&2
    tail -40 "$work/log.txt" >&2
    status=1
  fi
done
exit $status
