#!/usr/bin/env bash
# Builds the previous recorder for the stream benchmark's side-by-side figures (issue #15:
# "ratios against the bare call and against the previous recorder, measured in the same run").
#
# The previous recorder is this repository's recorder before the shared-memory region: an
# in-process recorder whose background thread encoded, compressed (zstd 6) and wrote the trace
# inside the recorded program (commit f6d33c7, the parent of the commit that introduced the
# region). This script exports that commit from the git history into
# build/previous-recorder/src, adds this tree's bench/recorder_stream_bench.cc and
# bench/recorder_fixture.h to it as one more target (previous_recorder_stream), and builds only
# that target and what it needs (the old format and recorder libraries) into
# build/previous-recorder/build. `cltrace_bench` then runs it as BM_PreviousRecordStream right
# after its own BM_BareStream and BM_RecordStream and reports the ratios.
#
# Needs the git history (a clone, not an exported tree) and the packages scripts/deps.sh
# installs. Usage: scripts/build-previous-recorder.sh [COMMIT]
#   then: build/bin/cltrace_bench --benchmark_filter='BM_(Bare|Record|PreviousRecord)Stream'
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
commit=${1:-f6d33c7bc735709728f84d87d606a259843bfa09}
out=$root/build/previous-recorder
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "build-previous-recorder: commit $commit is not in this repository's history" \
       "(needs a git clone with history)" >&2
  exit 2
fi
scripts/deps.sh
rm -rf "$out/src"
mkdir -p "$out/src"
git archive "$commit" | tar -x -C "$out/src"
cp bench/recorder_stream_bench.cc bench/recorder_fixture.h "$out/src/bench/"
cat >> "$out/src/CMakeLists.txt" <<'CMAKE'

# Added by scripts/build-previous-recorder.sh: the stream benchmark of the current tree,
# compiled against this (previous) recorder.
if(NOT TARGET benchmark::benchmark_main)
  find_package(benchmark REQUIRED)
endif()
add_executable(previous_recorder_stream bench/recorder_stream_bench.cc)
target_compile_definitions(previous_recorder_stream PRIVATE CLTRACE_PREVIOUS_RECORDER_BUILD)
target_include_directories(previous_recorder_stream PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(previous_recorder_stream PRIVATE cltrace_recorder
                      benchmark::benchmark_main)
CMAKE
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$out/src" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCLTRACE_BUILD_TESTING=OFF "${launcher[@]}" >/dev/null
cmake --build "$out/build" --target previous_recorder_stream
echo "built $out/build/bin/previous_recorder_stream"
