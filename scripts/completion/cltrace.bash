# bash completion for cltrace (installed as share/bash-completion/completions/cltrace).
# Verbs come from `cltrace --help` (its "verbs:" list), each verb's flags from
# `cltrace VERB --help`, so new verbs and flags complete without editing this file; anything
# else completes file names (traces, drivers, output files).

# Prints the verbs `$1 --help` lists, one a line.
_cltrace_verbs() {
  "$1" --help 2>/dev/null | awk '/^verbs:/ { in_list = 1; next }
                                 in_list && /^$/ { exit }
                                 in_list { print $1 }'
}

# Prints the long and short flags `$1 $2 --help` mentions, one a line.
_cltrace_flags() {
  "$1" "$2" --help 2>&1 | grep -oE -- '(^|[][ ,|(=])--?[A-Za-z][A-Za-z0-9-]*' |
    sed -E 's/^[][ ,|(=]//' | sort -u
}

_cltrace() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local tool=${COMP_WORDS[0]}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$(_cltrace_verbs "$tool") help" -- "$cur")
    return 0
  fi
  local verb=${COMP_WORDS[1]}
  if [[ $verb == help ]]; then
    ((COMP_CWORD == 2)) &&
      mapfile -t COMPREPLY < <(compgen -W "$(_cltrace_verbs "$tool")" -- "$cur")
    return 0
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_cltrace_flags "$tool" "$verb")" -- "$cur")
    return 0
  fi
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  return 0
}
complete -F _cltrace cltrace
