#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run of the replay tests: configures build-asan/
# (g++, -fsanitize=address,undefined), builds only the replay unit and end-to-end tests and the
# programs and libraries they run (cltrace, cltrace-workload, the recording shim, the reference,
# null and probe drivers), and runs them. Any sanitizer report, in a test or in a process it
# starts (a `cltrace record` or `cltrace replay` the end-to-end tests run), fails the run.
# Usage: scripts/asan.sh [--gtest_filter=...]   (the filter is passed to every test program)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/sanitizer_lib.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [[ ! -f build-asan/CMakeCache.txt ]]; then
  # -O1 -g1: reports keep file:line, the build and the run stay fast. Warnings are not errors
  # here (the sanitizers make GCC warn about code it cannot see through; CI's -Werror build is
  # the normal one).
  flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
  cmake -S . -B build-asan "${sanitizer_generator[@]}" "${launcher[@]}" -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_C_COMPILER=gcc -DCLTRACE_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
tests=(replay_test replay_e2e_test)
cmake --build build-asan -j "$(nproc)" --target "${tests[@]}" cltrace cltrace-workload \
  cltrace_shim cltrace_refdriver cltrace_replay_null_driver cltrace_replay_probe_driver

# Reports go to files (one per process, children included), so none can hide in output a test
# captured; halt_on_error also makes the reporting process fail at once. The drivers are
# dlopened by programs built with the same runtime, so the link-order check is not needed.
# Leak checking is off: a replay that ends before the recording's destroys (a stop at a
# divergence, --until, a recording of a killed program) leaves the driver's objects and their
# handle memory allocated on purpose (the driver may still hold them, replayer/internal/
# session.cc ~Session), so every such replay would be a "leak" by design.
reports="$PWD/build-asan/asan-reports"
sanitizer_fresh_dir "$reports"
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 log_path=$reports/asan verify_asan_link_order=0"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 log_path=$reports/ubsan"
export CLTRACE_BUILD_DIR="$PWD/build-asan"
status=0
sanitizer_run_tests asan build-asan "$reports" "${tests[@]}" -- "$@" || status=1
sanitizer_check_reports asan sanitizer "$reports"/asan.* "$reports"/ubsan.* || status=1
[[ $status -eq 0 ]] && echo "asan: ${#tests[@]} test programs, no AddressSanitizer/UBSan reports"
exit $status
