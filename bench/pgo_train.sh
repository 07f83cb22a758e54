#!/bin/sh
# pgo_train.sh WHATIF WORKLOAD_DIR WORK_DIR — the training run of a profile-guided build
# (setup.sh; WHATIF_PGO=0 turns it off): WHATIF is built with -fprofile-generate; this records
# every bundled workload at its small test size and runs the hot commands over each (the
# detailed model on two machines, Gus with taint, an MFIR window), so the compiler sees the
# real hot paths. Simulated results do not depend on the profile (the same code, laid out and
# inlined differently); it changes speed only. Exits non-zero if anything fails.
set -eu
if [ $# -ne 3 ]; then
  echo "usage: $0 WHATIF WORKLOAD_DIR WORK_DIR" >&2
  exit 2
fi
whatif=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$3
rm -rf "$work"
mkdir -p "$work"
"$here/../tests/record_workloads.sh" "$whatif" "$2" "$work" >/dev/null
for t in "$work"/*.wtr; do
  "$whatif" run "$t" --max 1000000 >/dev/null
  "$whatif" run "$t" --uarch skylake --max 200000 >/dev/null
  "$whatif" gus "$t" >/dev/null
done
"$whatif" mfir "$work/ptrchase.wtr" -o "$work/ptrchase.db" --window 0:100000 >/dev/null
rm -rf "$work"
