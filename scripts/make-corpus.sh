#!/usr/bin/env bash
# Regenerates the golden corpus of recorded traces: every line of corpus/traces/manifest.txt
# is recorded with `cltrace record` around `cltrace-workload ARGS` and normalised with
# cltrace-normalize (format/normalize.h), so that running this twice gives the same bytes.
#
#   scripts/make-corpus.sh [OUTDIR]     OUTDIR defaults to corpus/traces
#
# Writing into corpus/traces also refreshes the golden verdicts beside the traces
# (CLTRACE_UPDATE_GOLDEN=1 on the corpus test): review the diff before committing.
# Uses the build directory $CLTRACE_BUILD_DIR (default build/), building what it needs.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CLTRACE_BUILD_DIR:-$root/build}"
out="${1:-$root/corpus/traces}"
manifest="$root/corpus/traces/manifest.txt"

cmake --build "$build" -j2 --target cltrace cltrace-workload cltrace_shim cltrace_refdriver \
  cltrace-normalize >/dev/null
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Lockstep fixes the order of the workload's calls; the allocator must not make the addresses
# the calls see depend on timing either: the recorder frees captured bytes on its own thread,
# and with glibc's default per-thread cache of 7 chunks per size those frees spill back into
# the application thread's arena at moments that vary, changing which addresses the next
# objects get (and so which handles the normalised trace shows as reused). A cache that never
# spills keeps every thread's allocations a function of its own calls.
export GLIBC_TUNABLES=glibc.malloc.tcache_count=65535
unset CLTRACE_REFDRIVER_CONFIG CLTRACE_DRIVER

count=0
while IFS='|' read -r name rule replay args; do
  name="${name//[[:space:]]/}"
  [[ -z "$name" || "$name" == \#* ]] && continue
  read -r -a argv <<<"$args"
  set +e
  "$build/bin/cltrace" record -o "$tmp/$name.raw" -- "$build/bin/cltrace-workload" "${argv[@]}" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  status=$?
  set -e
  # The workload exits 1 when it detected the violation its --bug mode plants.
  if [[ $status -gt 1 ]]; then
    echo "make-corpus: recording $name failed (exit $status):" >&2
    cat "$tmp/$name.out" "$tmp/$name.err" >&2
    exit 1
  fi
  "$build/bin/cltrace-normalize" "$tmp/$name.raw" "$out/$name.cltrace"
  count=$((count + 1))
done <"$manifest"
echo "make-corpus: $count traces in $out"

if [[ "$out" == "$root/corpus/traces" ]]; then
  cmake --build "$build" -j2 --target corpus_test >/dev/null
  if ! (cd "$root" && CLTRACE_BUILD_DIR="$build" CLTRACE_UPDATE_GOLDEN=1 \
    "$build/bin/corpus_test" --gtest_filter='Corpus/CorpusTest.*' >"$tmp/verdicts.log" 2>&1); then
    grep -v '^\[ *\(RUN\|OK\) ' "$tmp/verdicts.log" >&2
    echo "make-corpus: verdicts rewritten, but a corpus expectation failed (above)" >&2
    exit 1
  fi
  echo "make-corpus: verdicts refreshed (review: git diff corpus/traces)"
fi
