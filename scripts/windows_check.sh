#!/usr/bin/env bash
# Checks the generated DDI header for Windows with Debian's mingw-w64 cross compilers, for
# x86_64-w64-mingw32 and i686-w64-mingw32, <windows.h> first:
#   - the header compiles as C11 and C++20 beside the SDK, warnings as errors (no redefined SDK
#     type or error code);
#   - ddi/ms_layout_test.cc and ddi/abi_args_layout_test.cc compile: every table slot,
#     structure size, member offset and prototype (calling convention included) is Microsoft's
#     on that ABI;
#   - a driver entry point defined through the header exports as Windows expects
#     (`_OpenAdapter10_2@4`, __stdcall, on i686; `OpenAdapter10_2` on x86_64);
#   - x86_64 only: the recorder's Windows platform layer (recorder/platform_win32.cc: named
#     file mapping, named events, LoadLibrary, CreateProcess, a vectored exception handler)
#     and the producer's ring path (recorder/ring_wait.cc with the inline ring and region code)
#     compile warning-free and link, with recorder/testing/win32_producer_probe.cc, into a DLL
#     with no undefined symbol that imports nothing but KERNEL32.dll and the C runtime (no
#     third-party dependency; the C++ runtime linked statically).
# Installs the cross compilers when missing. Needs a configured build directory for the
# generated header (default: build/, as scripts/test.sh leaves it).
# Usage: scripts/windows_check.sh [BUILD_DIR]   (CI: .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --windows
build=${1:-build}
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "windows_check: $build is not a configured build directory (run scripts/test.sh first)" >&2
  exit 2
fi
cmake --build "$build" --target cltrace_ddi_gen >/dev/null
gen=$build/gen  # CLTRACE_GEN_DIR
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-Wall -Wextra -Werror -I . -I "$gen")
for triple in x86_64-w64-mingw32 i686-w64-mingw32; do
  printf '#include <windows.h>\n#include "ddi/ddi_abi.h"\n' >"$work/both.c"
  "$triple-gcc" -std=c11 "${flags[@]}" -fsyntax-only "$work/both.c"
  "$triple-g++" -std=c++20 "${flags[@]}" -fsyntax-only -x c++ "$work/both.c"
  "$triple-g++" -std=c++20 "${flags[@]}" -DCLTRACE_MS_LAYOUT_ONLY -fsyntax-only \
    ddi/ms_layout_test.cc
  "$triple-g++" -std=c++20 "${flags[@]}" -DCLTRACE_ABI_LAYOUT_STANDALONE -include windows.h \
    -fsyntax-only ddi/abi_args_layout_test.cc
  "$triple-gcc" -std=c11 "${flags[@]}" -c ddi/testing/entry_point_probe.c -o "$work/probe.o"
  want=OpenAdapter10_2
  [[ $triple == i686-* ]] && want=_OpenAdapter10_2@4
  if ! "$triple-nm" "$work/probe.o" | grep -qE " T ${want}\$"; then
    echo "windows_check: $triple: the entry point does not export as $want:" >&2
    "$triple-nm" "$work/probe.o" >&2
    exit 1
  fi
  echo "windows_check: $triple: header, Microsoft layouts and $want ok"
done
triple=x86_64-w64-mingw32
"$triple-g++" -std=c++20 -O2 "${flags[@]}" -shared -o "$work/producer_probe.dll" \
  recorder/testing/win32_producer_probe.cc recorder/ring_wait.cc recorder/platform_win32.cc \
  -static-libgcc -static-libstdc++ -Wl,--no-undefined
imports=$("$triple-objdump" -p "$work/producer_probe.dll" | sed -n 's/^[[:space:]]*DLL Name: //p')
for dll in $imports; do
  case ${dll,,} in
    kernel32.dll | msvcrt.dll | ucrtbase.dll | api-ms-win-crt-*) ;;
    *)
      echo "windows_check: $triple: the recorder's platform layer imports $dll" >&2
      exit 1
      ;;
  esac
done
echo "windows_check: $triple: recorder platform layer and ring path link (imports: $(echo $imports))"
