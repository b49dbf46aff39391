#!/usr/bin/env bash
# The bash completion of cltrace (scripts/completion/cltrace.bash), driven the way bash drives
# it (COMP_WORDS/COMP_CWORD, then the completion function):
#   - `cltrace ch<TAB>` completes to exactly `check`;
#   - `cltrace <TAB>` offers exactly the verbs `cltrace --help` lists (plus `help`), and each
#     of them is a verb the tool accepts (`cltrace VERB --help` exits 0);
#   - `cltrace check --<TAB>` offers the flags `cltrace check --help` documents;
#   - other words complete file names.
# Usage: completion_test.sh COMPLETION_SCRIPT CLTRACE_BINARY
set -uo pipefail
completion=$1 tool=$2
# shellcheck disable=SC1090
source "$completion" || { echo "FAIL: cannot source $completion"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

complete_words() {  # complete_words WORD... : completes the last word; prints COMPREPLY sorted
  COMP_WORDS=("$tool" "$@")
  COMP_CWORD=$#
  COMPREPLY=()
  _cltrace
  printf '%s\n' "${COMPREPLY[@]}" | sort
}

got=$(complete_words ch)
[[ $got == check ]] || fail "cltrace ch<TAB> gave '$got', want 'check'"

want=$({ "$tool" --help | sed -n '/^verbs:$/,/^$/p' | sed '1d;/^$/d' | awk '{print $1}'
         echo help; } | sort)
[[ $(wc -l <<<"$want") -ge 5 ]] || fail "cltrace --help lists too few verbs: $want"
got=$(complete_words "")
[[ $got == "$want" ]] || fail "verbs offered differ from cltrace --help:"$'\n'"$(diff <(echo "$want") <(echo "$got"))"
for verb in $want; do
  [[ $verb == help ]] && continue
  "$tool" "$verb" --help >/dev/null 2>&1 || fail "cltrace $verb --help exits non-zero"
done
got=$(complete_words help rep)
[[ $got == replay ]] || fail "cltrace help rep<TAB> gave '$got', want 'replay'"

flags=$(complete_words check --)
check_help=$("$tool" check --help 2>&1)
[[ -n $flags ]] || fail "cltrace check --<TAB> offered no flags"
for flag in $flags; do
  grep -qe "$flag" <<<"$check_help" || fail "offered flag $flag is not in cltrace check --help"
done
for flag in $(grep -oE -- '--[a-z][a-z0-9-]+' <<<"$check_help" | sort -u); do
  grep -qx -e "$flag" <<<"$flags" || fail "cltrace check --help documents $flag; not offered"
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
touch "$dir/one.cltrace"
got=$(complete_words info "$dir/on")
[[ $got == "$dir/one.cltrace" ]] || fail "file completion gave '$got'"

((fails == 0)) && echo PASS
exit $((fails > 0))
