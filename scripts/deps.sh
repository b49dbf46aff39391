#!/usr/bin/env bash
# Installs the Debian packages cltrace needs (idempotent; silent when nothing is missing);
# python3 runs the include-boundary check (scripts/check_includes.py, also a ctest test).
# Usage: scripts/deps.sh [--fuzz|--format|--windows]
#   --fuzz adds clang and its sanitizer runtimes; --format adds clang-format (the CI style check);
#   --windows adds the mingw-w64 cross compilers (scripts/windows_check.sh)
set -euo pipefail

pkgs=(g++ cmake ninja-build pkg-config git python3
      libprotobuf-dev protobuf-compiler libzstd-dev libabsl-dev rapidjson-dev libsqlite3-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libimgui-dev libstb-dev libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri libglfw3-dev)
if [[ "${1:-}" == "--fuzz" ]]; then
  pkgs+=(clang-14 libclang-rt-14-dev)
fi
if [[ "${1:-}" == "--format" ]]; then
  pkgs+=(clang-format)
fi
if [[ "${1:-}" == "--windows" ]]; then
  pkgs+=(g++-mingw-w64-x86-64-win32 g++-mingw-w64-i686-win32)
fi

missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "cltrace: installing missing Debian packages: ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
