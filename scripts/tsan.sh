#!/usr/bin/env bash
# ThreadSanitizer run of the multi-threaded code: configures build-tsan/ with -DCLTRACE_TSAN=ON,
# builds only the kernel-model (wddm, umd, dx6), reference-driver and runtime-model tests (and
# the programs they start), and runs them. Any TSAN report, in a test or in a process it starts, fails the run.
#
# Why std::mutex everywhere in these components: Debian's Abseil is not built with TSAN, so
# TSAN cannot see absl::Mutex's synchronization and would report every access it guards.
# Usage: scripts/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/sanitizer_lib.sh
if [[ ! -f build-tsan/CMakeCache.txt ]]; then
  # -O1 -g1 (line tables only): TSAN reports keep file:line, the build is ~30% faster.
  cmake -S . -B build-tsan "${sanitizer_generator[@]}" -DCLTRACE_TSAN=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
fi
tests=(wddm_test umd_test dx6_test refdriver_config_test refdriver_hostile_test runtime_golden_test
       runtime_threads_test runtime_modes_test runtime_annotation_test runtime_kernel_wiring_test)
cmake --build build-tsan -j "$(nproc)" --target "${tests[@]}" cltrace-workload \
  cltrace_test_shim cltrace_refdriver

# Reports go to files (one per process, children included), so none can hide in output a
# test captured; halt_on_error also makes the reporting process fail at once.
reports="$PWD/build-tsan/tsan-reports"
sanitizer_fresh_dir "$reports"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$reports/report"
export CLTRACE_BUILD_DIR="$PWD/build-tsan"
status=0
sanitizer_run_tests tsan build-tsan "$reports" "${tests[@]}" -- || status=1
sanitizer_check_reports tsan ThreadSanitizer "$reports"/report.* || status=1
[[ $status -eq 0 ]] && echo "tsan: ${#tests[@]} test programs, no ThreadSanitizer reports"
exit $status
