#!/usr/bin/env bash
# The style check CI runs: every C++ file git knows must be clang-format clean (.clang-format:
# Google style, 100 columns). Prints the files that are not and exits 1; `clang-format -i FILE`
# fixes one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --format
bad=()
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(git ls-files '*.cc' '*.h')
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "clang-format: ${#bad[@]} file(s) not formatted:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "clang-format: every C++ file is formatted"
