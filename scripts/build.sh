#!/usr/bin/env bash
# Configures and builds cltrace into build/ (binaries in build/bin, libraries in build/lib).
# CLTRACE_CMAKE_ARGS: extra cmake arguments, applied to the configuration every time they are
# given (e.g. CLTRACE_CMAKE_ARGS=-DCLTRACE_WERROR=ON, as .ci/run does).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
read -r -a extra <<<"${CLTRACE_CMAKE_ARGS:-}"
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null
elif [[ ${#extra[@]} -gt 0 ]]; then
  cmake -S . -B build "${extra[@]}" >/dev/null
fi
cmake --build build -j "$(nproc)"
