#!/bin/bash
# Watches the zeroing threads while CMD runs, for what was once seen in
# the Redis bloat runs (bench/README.md, "When zerod's CPU time is not
# zeroing"): hawkeye_zerod charged a whole CPU while prezero_pages
# stood still. Runs INSIDE the guest as root:
#   bench/watch-zerod.sh OUTFILE CMD [ARGS...]
# Every 3 s one line to OUTFILE: the uptime, how fast 16 MB already
# written once are written again (dd into a tmpfs file), each zerod
# thread's CPU ticks and context switches (voluntary/involuntary), and the
# pool's counters. The first time a zerod thread is charged over 80 % of
# a CPU between two lines while the threads zeroed under 48 MB (they zeroed
# 0.2-2.9 GB per CPU-second in other runs): its /proc stack (where it last switched
# out) and sched stats, and five NMI backtraces of every CPU, half a
# second apart, on the console (sysrq l; vm-run keeps the console log in
# results/log/). No function tracer: turned on while the workload runs,
# it oopsed a TCG guest (int3 while ftrace patched the kernel text).
# Exits with CMD's status.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=$1
shift

caught() {
	local pid=$1
	echo "== zerod (pid $pid) over 80 % of a CPU, zeroing under 16 MB/s"
	cat /proc/$pid/stack
	head -20 /proc/$pid/sched
	for _ in 1 2 3 4 5; do
		echo l >/proc/sysrq-trigger
		sleep 0.5
	done
	echo "== NMI backtraces on the console"
}

watch() {
	declare -A last
	local hz comm ticks pz pz_last= caught_once= buf line
	hz=$(getconf CLK_TCK)
	buf=$(mktemp /tmp/watch-zerod.XXXXXX)
	dd if=/dev/zero of="$buf" bs=1M count=16 2>/dev/null
	while :; do
		line="$(cut -d' ' -f1 /proc/uptime) rewrite=$(dd if=/dev/zero of="$buf" bs=1M count=16 conv=notrunc 2>&1 |
			awk -F', ' '/copied/ {print $NF}' | tr -d ' ')"
		pz=$(prezero_pages)
		while read -r comm ticks; do
			[[ $comm == hawkeye_zerod* ]] || continue
			line+=" $comm ticks=$ticks switches=$(awk '/^nr_(in)?voluntary_switches/ {
				printf "%s%s", s, $3; s = "/" }' /proc/"$(pgrep -x "$comm")"/sched)"
			if [ -z "$caught_once" ] && [ -n "${last[$comm]:-}" ] &&
			   [ $((ticks - last[$comm])) -gt $((hz * 3 * 8 / 10)) ] &&
			   [ $((pz - pz_last)) -lt $((48 * 256)) ]; then
				caught_once=1
				caught "$(pgrep -x "$comm")"
			fi
			last[$comm]=$ticks
		done < <(thread_ticks)
		pz_last=$pz
		echo "$line $(grep -E '^(nr_free_zeroed|hawkeye_prezero_(pages|woken|backoff)|hawkeye_fault_sync_zero_(4k|2m)) ' /proc/vmstat | tr '\n' ' ')"
		sleep 3
	done
}

watch >"$out" 2>&1 &
watcher=$!
"$@"
rc=$?
kill $watcher
exit $rc
