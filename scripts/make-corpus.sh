#!/usr/bin/env bash
# Regenerates the golden corpus of recorded traces: every line of corpus/traces/manifest.txt
# is recorded with `cltrace record` around `cltrace-workload ARGS` and normalised with
# cltrace-normalize (format/normalize.h), so that running this again, from any checkout and
# build directory, gives the same bytes.
#
#   scripts/make-corpus.sh [--no-build] [OUTDIR [NAME...]]
#
# OUTDIR defaults to corpus/traces; NAMEs (manifest names) limit the run to those lines.
# Writing into corpus/traces also refreshes the golden verdicts beside the traces
# (CLTRACE_UPDATE_GOLDEN=1 on the corpus test): review the diff before committing.
# Uses the build directory $CLTRACE_BUILD_DIR (default build/), building what it needs unless
# --no-build is given (tests/corpus/corpus_test.cc runs it so, on the binaries ctest built).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CLTRACE_BUILD_DIR:-$root/build}"
do_build=1
if [[ "${1:-}" == "--no-build" ]]; then
  do_build=0
  shift
fi
out="${1:-$root/corpus/traces}"
shift || true
only=("$@")
manifest="$root/corpus/traces/manifest.txt"

if [[ $do_build -eq 1 ]]; then
  cmake --build "$build" -j2 --target cltrace cltrace-workload cltrace_shim cltrace_refdriver \
    cltrace-normalize >/dev/null
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# Where the recording runs must not show in its bytes. The tools keep path strings on the heap
# (/proc/self/exe and the shim and driver paths derived from it, the output path, the
# environment the recorder builds for the program, the copy of environ the workload's setenv
# makes), so a path of another length moves later allocations to other malloc size classes
# and changes which freed addresses get reused, i.e. which handles the normalised trace shows
# as reused (a checkout under a longer build path gave other bytes for scene_R52 and
# scene_R72). So every recording runs from copies of the binaries in a directory whose path
# has a fixed length (/tmp/cltrace-corpus.XXXXXX, not $TMPDIR), with a fixed working
# directory, output path and environment (env -i: no CLTRACE_* setting, no user variables).
stage="$(mktemp -d /tmp/cltrace-corpus.XXXXXX)"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/bin" "$stage/lib" "$stage/run"
cp "$build/bin/cltrace" "$build/bin/cltrace-workload" "$stage/bin/"
cp "$build/lib/libcltrace_shim.so" "$build/lib/libcltrace_refdriver.so" "$stage/lib/"

# Lockstep fixes the order of the workload's calls; the allocator must not make the addresses
# the calls see depend on timing either: the recorder frees captured bytes on its own thread,
# and with glibc's default per-thread cache of 7 chunks per size those frees spill back into
# the application thread's arena at moments that vary, changing which addresses the next
# objects get (and so which handles the normalised trace shows as reused). A cache that never
# spills keeps every thread's allocations a function of its own calls.
record_env=(env -i PATH=/usr/bin:/bin LC_ALL=C GLIBC_TUNABLES=glibc.malloc.tcache_count=65535)

count=0
while IFS='|' read -r name _ _ args; do
  name="${name//[[:space:]]/}"
  [[ -z "$name" || "$name" == \#* ]] && continue
  if [[ ${#only[@]} -gt 0 && " ${only[*]} " != *" $name "* ]]; then continue; fi
  read -r -a argv <<<"$args"
  rm -f "$stage/run/trace.raw"
  set +e
  (cd "$stage/run" && "${record_env[@]}" "$stage/bin/cltrace" record -o "$stage/run/trace.raw" \
    -- "$stage/bin/cltrace-workload" "${argv[@]}" >"$stage/out" 2>"$stage/err")
  status=$?
  set -e
  # The workload exits 1 when it detected the violation its --bug mode plants.
  if [[ $status -gt 1 ]]; then
    echo "make-corpus: recording $name failed (exit $status):" >&2
    cat "$stage/out" "$stage/err" >&2
    exit 1
  fi
  "$build/bin/cltrace-normalize" "$stage/run/trace.raw" "$out/$name.cltrace"
  count=$((count + 1))
done <"$manifest"
if [[ ${#only[@]} -gt 0 && $count -ne ${#only[@]} ]]; then
  echo "make-corpus: only $count of the names '${only[*]}' are in $manifest" >&2
  exit 2
fi
echo "make-corpus: $count traces in $out"

if [[ "$out" == "$root/corpus/traces" ]]; then
  if [[ $do_build -eq 1 ]]; then
    cmake --build "$build" -j2 --target corpus_test >/dev/null
  fi
  if ! (cd "$root" && CLTRACE_BUILD_DIR="$build" CLTRACE_UPDATE_GOLDEN=1 \
    "$build/bin/corpus_test" --gtest_filter='Corpus/CorpusTest.*' >"$stage/verdicts.log" 2>&1); then
    grep -v '^\[ *\(RUN\|OK\) ' "$stage/verdicts.log" >&2
    echo "make-corpus: verdicts rewritten, but a corpus expectation failed (above)" >&2
    exit 1
  fi
  echo "make-corpus: verdicts refreshed (review: git diff corpus/traces)"
fi
