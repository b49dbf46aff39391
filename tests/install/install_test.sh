#!/usr/bin/env bash
# The installed package works for a program outside the tree: installs the build tree into a
# fresh prefix (cmake --install), builds tests/install/consumer against it and runs it on a
# committed trace; the call count it reads must equal what the installed `cltrace info` says.
# The installed tools work on their own too: `cltrace record` finds the installed shim and
# reference driver (<bin>/../lib) and records a workload that `cltrace check` passes.
#   find_package: configure + build the consumer with find_package(cltrace) (same generator,
#                 compiler and compiler launcher as the build tree)
#   pkg-config:   compile the same main.cc with `pkg-config --cflags --static --libs cltrace`
# Usage: install_test.sh find_package|pkg-config BUILD_DIR SOURCE_DIR GENERATOR CXX [LAUNCHER]
set -euo pipefail
mode=$1 build=$2 src=$3 generator=$4 cxx=$5 launcher=${6:-}
trace=$src/corpus/traces/smallcl.cltrace

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

for f in bin/cltrace bin/cltrace-workload lib/libcltrace_shim.so lib/libcltrace_refdriver.so \
         lib/libcltrace_ddi.a lib/libcltrace_format.a lib/libcltrace_check.a \
         lib/libcltrace_rules.a include/cltrace/rules/rules.h include/cltrace/rules/rule_list.inc \
         include/cltrace/format/trace_reader.h include/cltrace/ddi/ddi_abi.h \
         include/cltrace/ddi/catalog.h include/cltrace/ddi/call_traits.h \
         include/cltrace/ddi/call_traits_gen.h include/cltrace/format/trace.pb.h \
         include/cltrace/check/checker.h lib/cmake/cltrace/cltraceConfig.cmake \
         lib/cmake/cltrace/cltraceConfigVersion.cmake lib/pkgconfig/cltrace.pc \
         share/bash-completion/completions/cltrace; do
  [[ -e $prefix/$f ]] || { echo "FAIL: $f not installed" >&2; exit 1; }
done
if find "$prefix/include" -name '*_internal.h' -o -path '*/internal/*' | grep -q .; then
  echo "FAIL: internal headers installed:" >&2
  find "$prefix/include" -name '*_internal.h' -o -path '*/internal/*' >&2
  exit 1
fi

case $mode in
  find_package)
    launch=()
    [[ -n $launcher ]] && launch=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
    cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G "$generator" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" "${launch[@]}" \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 ||
      { cat "$work/configure.log" >&2; exit 1; }
    cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
    consumer=$work/consumer/count_events
    ;;
  pkg-config)
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    flags=$(pkg-config --cflags --static --libs cltrace)
    # shellcheck disable=SC2086  # the flags are words
    $launcher "$cxx" -std=c++20 -O1 -o "$work/count_events" \
      "$src/tests/install/consumer/main.cc" $flags
    consumer=$work/count_events
    ;;
  *) echo "usage: $0 find_package|pkg-config BUILD SRC GENERATOR CXX [LAUNCHER]" >&2; exit 2 ;;
esac

got=$("$consumer" "$trace")
want=$("$prefix/bin/cltrace" info "$trace" | awk '$1 == "calls" { print $2; exit }')
echo "consumer: $got; cltrace info: $want calls"
[[ -n $want && $want -gt 0 ]] || { echo "FAIL: no call count from cltrace info" >&2; exit 1; }
[[ ${got%% *} == "$want" ]] || { echo "FAIL: consumer read ${got%% *} calls, want $want" >&2; exit 1; }

if [[ $mode == find_package ]]; then
  (cd "$work" && env -u CLTRACE_SHIM -u CLTRACE_DRIVER "$prefix/bin/cltrace" record \
     -o "$work/recorded.cltrace" -- "$prefix/bin/cltrace-workload" smallcl) >"$work/record.log" 2>&1 ||
    { cat "$work/record.log" >&2; echo "FAIL: installed cltrace record" >&2; exit 1; }
  "$prefix/bin/cltrace" check "$work/recorded.cltrace" >"$work/check.log" ||
    { cat "$work/check.log" >&2; echo "FAIL: installed cltrace check" >&2; exit 1; }
  recorded=$("$work/consumer/count_events" "$work/recorded.cltrace")
  [[ ${recorded%% *} -gt 0 ]] || { echo "FAIL: recorded trace is empty" >&2; exit 1; }
  echo "installed record + check: ${recorded%% *} calls"
fi
echo "PASS ($mode)"
