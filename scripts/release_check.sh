#!/usr/bin/env bash
# Release build of the tools alone, warnings as errors, into build-release/: proves that an
# optimised build compiles (GCC's -O2/-O3 warnings differ from RelWithDebInfo's) and that the
# tools build without GoogleTest and Google Benchmark (-DCLTRACE_BUILD_TESTING=OFF), and that
# such a build installs (cmake --install into a temporary prefix).
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
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build-release --prefix "$prefix" >/dev/null
for f in bin/cltrace bin/cltrace-workload lib/libcltrace_shim.so lib/libcltrace_refdriver.so \
         lib/libcltrace_format.a lib/libcltrace_check.a lib/cmake/cltrace/cltraceConfig.cmake \
         lib/pkgconfig/cltrace.pc include/cltrace/format/trace_reader.h; do
  [[ -e $prefix/$f ]] || { echo "release: $f not installed" >&2; exit 1; }
done
"$prefix"/bin/cltrace --version
echo "release: tools built and installed (Release, -Werror, no tests)"
