#!/bin/sh
# bench_record.sh [BUILD_DIR] — recording throughput and trace size of every bundled workload
# at its default size (validate/workloads/workloads.txt). For each: the program's native run
# time, its run time under plain qemu-x86_64 (no plugin), and `whatif record` end to end
# (QEMU + plugin + finalize), with instructions/s and bytes per recorded instruction of the
# dynamic stream and of the whole file (which also holds the code of libc and ld.so).
# Wall-clock times on a shared machine: run it when the machine is otherwise quiet. The CPU
# column (user + system seconds of the recording, both of its threads) is less sensitive to
# other load; it needs /usr/bin/time (Debian package `time`). The load average is printed before
# and after. WHATIF_RECORD_TIMING=1 in the environment makes `whatif record` print its phases
# (QEMU run, opening the raw trace, finalize steps) on stderr.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
whatif=$build/whatif
wdir=$build/workloads
list=$here/../validate/workloads/workloads.txt
[ -x "$whatif" ] || { echo "no $whatif (build first, or pass the build directory)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/whatif-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

now() { date +%s.%N; }
# json_num KEY FILE: the number after "KEY": in whatif info --json output
json_num() { sed -n "s/^ *\"$1\": \([0-9.eE+-]*\),*$/\1/p" "$2" | head -n 1; }

echo "# $(uptime)"
printf '%-11s %-16s %10s %7s %7s %7s %7s %9s %8s %8s\n' workload args 'raw insns' native qemu record 'cpu' \
  'M insn/s' 'B/insn' 'file B/i'
tab=$(printf '\t')
while IFS="$tab" read -r name dflt test; do
  case "$name" in ''|'#'*) continue ;; esac
  prog=$wdir/$name
  t0=$(now)
  # shellcheck disable=SC2086 # the default arguments are a word list
  "$prog" $dflt > /dev/null
  t1=$(now)
  # shellcheck disable=SC2086
  qemu-x86_64 -cpu max "$prog" $dflt > /dev/null
  t2=$(now)
  if [ -x /usr/bin/time ]; then
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$whatif" record -q -o "$tmp/$name.wtr" -- "$prog" $dflt > /dev/null
    cpu=$(awk '{print $1 + $2}' "$tmp/time")
  else
    # shellcheck disable=SC2086
    "$whatif" record -q -o "$tmp/$name.wtr" -- "$prog" $dflt > /dev/null
    cpu=0
  fi
  t3=$(now)
  "$whatif" info --json "$tmp/$name.wtr" > "$tmp/$name.json"
  raw=$(json_num raw_instructions "$tmp/$name.json")
  sbytes=$(json_num stream_bytes "$tmp/$name.json")
  fbytes=$(json_num file_bytes "$tmp/$name.json")
  awk -v n="$name" -v a="$dflt" -v raw="$raw" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" \
      -v cpu="$cpu" -v sb="$sbytes" -v fb="$fbytes" 'BEGIN {
    rec = t3 - t2
    printf "%-11s %-16s %10d %6.2fs %6.2fs %6.2fs %6.2fs %9.1f %8.3f %8.3f\n", n, a, raw, t1 - t0,
           t2 - t1, rec, cpu, raw / rec / 1e6, sb / raw, fb / raw
  }'
  rm -f "$tmp/$name.wtr"
done < "$list"
echo "# $(uptime)"
