# Shared steps of the sanitizer runs (scripts/asan.sh, scripts/tsan.sh); source it, don't run it.
# Each run builds its test programs into its own build dir, sends every sanitizer report to a
# file under a fresh reports dir (one per process, children included, so none can hide in
# output a test captured), and fails on a failing test or on any report file.

# The CMake generator arguments: Ninja when it is installed.
sanitizer_generator=()
command -v ninja >/dev/null && sanitizer_generator=(-G Ninja)

# sanitizer_fresh_dir DIR: DIR emptied (or made).
sanitizer_fresh_dir() {
  rm -rf "$1"
  mkdir -p "$1"
}

# sanitizer_run_tests TAG BUILD_DIR REPORTS TEST... -- ARG...: runs each BUILD_DIR/bin/TEST with
# --gtest_brief=1 and the ARGs, logging to REPORTS/TEST.log; on a failure prints the log's tail.
# Returns 1 when any test failed.
sanitizer_run_tests() {
  local tag=$1 build=$2 reports=$3
  shift 3
  local tests=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    tests+=("$1")
    shift
  done
  [[ $# -gt 0 ]] && shift
  local status=0 t
  for t in "${tests[@]}"; do
    echo "$tag: $t"
    if ! "$build"/bin/"$t" --gtest_brief=1 "$@" > "$reports/$t.log" 2>&1; then
      echo "$tag: $t FAILED (log: $reports/$t.log)" >&2
      tail -40 "$reports/$t.log" >&2
      status=1
    fi
  done
  return $status
}

# sanitizer_check_reports TAG NOUN FILE...: prints the head of every FILE that exists (a
# sanitizer report, NOUN names the kind); returns 1 when there is any.
sanitizer_check_reports() {
  local tag=$1 noun=$2
  shift 2
  local status=0 f
  for f in "$@"; do
    [[ -e "$f" ]] || continue
    echo "$tag: $noun report in $f" >&2
    head -60 "$f" >&2
    status=1
  done
  return $status
}
