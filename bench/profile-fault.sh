#!/bin/sh
# Where a THP fault's time goes: function_graph below
# do_huge_pmd_anonymous_page (depth DEPTH, default 3) over one 64 MiB
# table1 run, with pre-zeroing on (HawkEye-2MB) and off (Linux-2MB). Runs
# INSIDE the guest as root; traces to results/raw/profile/. bench/README.md
# ("Where a pre-zeroed fault's time goes") has the figures and the command:
#   scripts/vm-run --prealloc --flavour release -- bench/profile-fault.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
T=/sys/kernel/tracing THP=/sys/kernel/mm/transparent_hugepage PZ=/sys/kernel/mm/hawkeye/prezero
OUT=$here/../results/raw/profile
[ -d $T/options ] || mount -t tracefs none $T
mkdir -p "$OUT"
for config in HawkEye-2MB Linux-2MB; do
	z=
	[ $config = HawkEye-2MB ] && z=-z
	echo always >$THP/enabled
	echo 0 >$PZ/rate
	echo $([ -n "$z" ] && echo 1 || echo 0) >$PZ/enabled
	"$here/../build/bench/table1" -m 64 -r 1 -l warm $z >/dev/null
	echo function_graph >$T/current_tracer
	echo do_huge_pmd_anonymous_page >$T/set_graph_function
	echo "${DEPTH:-3}" >$T/max_graph_depth
	echo >$T/trace
	echo 1 >$T/tracing_on
	"$here/../build/bench/table1" -m 64 -r 1 -l $config $z >"$OUT/$config.json"
	echo 0 >$T/tracing_on
	cat $T/trace >"$OUT/$config.trace"
	echo nop >$T/current_tracer
done
echo 0 >$PZ/enabled
