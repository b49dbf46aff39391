#!/usr/bin/env bash
# Release build of the tools alone, warnings as errors, into build-release/: proves that an
# optimised build compiles (GCC's -O2/-O3 warnings differ from RelWithDebInfo's) and that the
# tools build without GoogleTest and Google Benchmark (-DCLTRACE_BUILD_TESTING=OFF).
# Usage: scripts/release_check.sh   (CI: .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-release "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCLTRACE_BUILD_TESTING=OFF -DCLTRACE_WERROR=ON >/dev/null
cmake --build build-release -j "$(nproc)"
for tool in cltrace cltrace-workload cltrace-inspector; do
  build-release/bin/"$tool" --version
done
echo "release: tools built (Release, -Werror, no tests)"
