#!/bin/sh
# record_workloads.sh WHATIF WORKLOAD_DIR OUT_DIR — record each bundled workload with its small
# test arguments (validate/workloads/workloads.txt) into OUT_DIR/<name>.wtr. Used as the ctest
# fixture of the integration tests; also handy by hand. Exits non-zero if any recording fails.
set -eu
if [ $# -ne 3 ]; then
  echo "usage: $0 WHATIF WORKLOAD_DIR OUT_DIR" >&2
  exit 2
fi
whatif=$1
wdir=$2
out=$3
list=$(dirname "$0")/../validate/workloads/workloads.txt
mkdir -p "$out"
tab=$(printf '\t')
status=0
while IFS="$tab" read -r name dflt test; do
  case "$name" in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086 # the test arguments are a word list
  if "$whatif" record -q -o "$out/$name.wtr" -- "$wdir/$name" $test > "$out/$name.stdout"; then
    echo "recorded $name ($test)"
  else
    echo "FAILED: $name ($test)" >&2
    status=1
  fi
done < "$list"
exit $status
