#!/usr/bin/env bash
# HawkEye's costs as memory grows (the sampling cost of -m is its first
# point). For each total working set (GiB) and number of processes,
# the processes (bench/sampling.c, each GIB/N of it) fault their share as
# base pages and keep writing random pages (of the first HOT percent of
# it: 100, all of it, is the worst case), under every mechanism at its
# defaults (pre-zeroing, bloat recovery, hawkeye-g with the default scan
# period and sample window), promotion held off (promote/sleep_ms 1 h) so
# that the whole working set stays sampled: the worst case. Measured over
# PASSES whole sample passes (from the end of one pass's count walk to the
# end of another's):
#   - CPU time of every HawkEye thread (and khugepaged, kcompactd);
#   - hawkeye_promoted's mmap_lock holds (tracepoints mmap_lock_acquire_returned
#     and mmap_lock_released, filtered to the thread): count, p99, max;
#   - its walks (a burst of holds: the clear walk, then the count walk after
#     the sample window), wall time each;
#   - the access_maps' regions (/proc/PID/hawkeye) and the memory they take,
#     computed from the kernel's object sizes (a struct hawkeye_region is a
#     48-byte kmalloc-64 object; an xarray node of 64 slots is 576 bytes).
# Run INSIDE the guest as root; one JSON line per point to OUTFILE.
#   bench/sampling.sh [-o OUTFILE] [-b BINDIR] [-g "GIB..."] [-n "PROCS..."]
#                     [-p PASSES] [-m MIB] [-w "HOT..."]
# -m MIB: a single point of MIB MiB and one process.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=results/raw/sampling.jsonl bindir=$here/../build/bench
sizes="1 4 16" procs="1 8 64" passes=2 mib= hots=100
usage() {
	echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-g \"GIB...\"] [-n \"PROCS...\"] [-p PASSES] [-m MIB] [-w \"HOT...\"]" >&2
	exit 2
}
. "$here/lib.sh"
options usage o:out b:bindir g:sizes n:procs p:passes m:mib w:hots -- "$@"
P=/sys/kernel/mm/hawkeye/promote
T=/sys/kernel/tracing
[ -d $P ] || { echo "sampling.sh: this kernel has no HawkEye promotion" >&2; exit 1; }
[ -d $T/events ] || mount -t tracefs nodev $T
orig_thp=$(current $THP/enabled) orig_sleep=$(cat $P/sleep_ms) orig_policy=$(current $P/policy)
orig_prezero=$(cat /sys/kernel/mm/hawkeye/prezero/enabled)
orig_debloat=$(cat /sys/kernel/mm/hawkeye/debloat/enabled)
pids=()
reset() {
	[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
	echo 0 >$T/tracing_on
	echo 0 >$T/events/mmap_lock/enable
	echo 0 >$T/events/mmap_lock/filter
	echo linux >$P/policy
	echo "$orig_sleep" >$P/sleep_ms
	echo "$orig_policy" >$P/policy
	echo "$orig_thp" >$THP/enabled
	echo "$orig_prezero" >/sys/kernel/mm/hawkeye/prezero/enabled
	echo "$orig_debloat" >/sys/kernel/mm/hawkeye/debloat/enabled
}
trap reset EXIT

# HawkEye's promote_sampled counter into $sampled, with bash builtins only:
# the poll below must not fork while 64 processes keep both vCPUs busy.
sampled() {
	read -r sampled </sys/kernel/mm/hawkeye/stats/promote_sampled
}
# Wait for the end of a count walk: promote_sampled moved, then
# stayed put for 3 s (the next pass is a scan period away). By the clock,
# not by the number of polls: under load a poll takes longer than its sleep.
pass_end() {
	local s moved=0 quiet_since=${EPOCHREALTIME/./}
	sampled
	s=$sampled
	while [ $moved -eq 0 ] || [ $((${EPOCHREALTIME/./} - quiet_since)) -lt 3000000 ]; do
		sleep 0.1
		sampled
		if [ "$sampled" != "$s" ]; then
			moved=1 s=$sampled quiet_since=${EPOCHREALTIME/./}
		fi
	done
}

# The script's own polls and reads must not wait behind 64 busy processes.
renice -n -10 $$ >/dev/null
echo 3600000 >$P/sleep_ms
echo 1 >/sys/kernel/mm/hawkeye/prezero/enabled
echo 1 >/sys/kernel/mm/hawkeye/debloat/enabled
echo hawkeye-g >$P/policy
# madvise: the program's faults get base pages (no hint yet); its
# MADV_HUGEPAGE then makes the range eligible, and registers the process.
echo madvise >$THP/enabled
echo 8192 >$T/buffer_size_kb
tid=$(pgrep -x hawkeye_promoted)
echo "common_pid == $tid" >$T/events/mmap_lock/filter
mkdir -p "$(dirname "$out")"
fifo=/tmp/sampling.fifo

points=()
if [ -n "$mib" ]; then
	points=("$mib 1 100")
else
	for w in $hots; do for g in $sizes; do for n in $procs; do
		points+=("$((g * 1024)) $n $w")
	done; done; done
fi
for pt in "${points[@]}"; do
	set -- $pt
	total=$1 nproc=$2 each=$(($1 / $2)) hot=$3
	echo "sampling.sh: $total MiB in $nproc processes of $each MiB, $hot % hot" >&2
	# The pool refilled after the last point's memory came back.
	z=$(zerod_ticks) z0=-1
	while [ "$z" != "$z0" ]; do z0=$z; sleep 2
		z=$(zerod_ticks); done
	rm -f $fifo && mkfifo $fifo
	exec 3<>$fifo
	pids=()
	for ((i = 0; i < nproc; i++)); do
		nice -n 10 "$bindir/sampling" "$each" 100000 "$hot" >&3 &	# back to nice 0
		pids+=($!)
	done
	for ((i = 0; i < nproc; i++)); do read -r _ <&3; done
	# The first pass that saw every process whole, then PASSES more.
	pass_end
	pass_end
	echo >$T/trace
	echo 1 >$T/events/mmap_lock/mmap_lock_acquire_returned/enable
	echo 1 >$T/events/mmap_lock/mmap_lock_released/enable
	echo 1 >$T/tracing_on
	ticks0=$(thread_ticks) t0=$(date +%s.%N) s0=$(sampled; echo "$sampled")
	for ((i = 0; i < passes; i++)); do pass_end; done
	ticks1=$(thread_ticks) t1=$(date +%s.%N) s1=$(sampled; echo "$sampled")
	echo 0 >$T/tracing_on
	regions=0
	for p in "${pids[@]}"; do
		r=$(awk '$1 == "regions" {print $2}' /proc/$p/hawkeye)
		regions=$((regions + r))
		# Leaf nodes of the process's xarray, plus 4 above them (26 index bits).
		xa_nodes=$((${xa_nodes:-0} + (r + 63) / 64 + 4))
	done
	rss=$(awk '/^Rss:/ {s += $2} END {print s}' $(printf '/proc/%s/smaps_rollup ' "${pids[@]}"))
	huge=$(awk '/^AnonHugePages:/ {s += $2} END {print s}' $(printf '/proc/%s/smaps_rollup ' "${pids[@]}"))
	kill "${pids[@]}"
	wait "${pids[@]}" 2>/dev/null || true
	pids=()
	exec 3<&-
	python3 - "$T/trace" <<EOF >>"$out"
import json, sys
def ticks(s):
    d = {}
    for ln in s.strip().splitlines():
        n, t = ln.split()
        n = n.rstrip("0123456789") if n.startswith(("hawkeye_zerod", "kcompactd")) else n
        d[n] = d.get(n, 0) + int(t)
    return d
a, b = ticks("""$ticks0"""), ticks("""$ticks1""")
hz = $(getconf CLK_TCK)
secs = $t1 - $t0
threads = {n: round((b[n] - a.get(n, 0)) / hz, 2) for n in b}
holds, acq, walks = [], None, []
for ln in open(sys.argv[1]):
    if ln.startswith("#") or "mmap_lock_" not in ln:
        continue
    ts = float(ln.split(": ")[0].split()[-1])
    if "acquire_returned" in ln and "success=true" in ln:
        acq = ts
    elif "mmap_lock_released" in ln and acq is not None:
        holds.append((acq, ts))
        acq = None
for s, e in holds:
    if walks and s - walks[-1][1] < 0.5:
        walks[-1][1] = e
    else:
        walks.append([s, e])
us = sorted((e - s) * 1e6 for s, e in holds)
p99 = us[min(len(us) - 1, int(0.99 * len(us)))] if us else None
cpu = threads.get("hawkeye_promoted", 0.0)
print(json.dumps({
    "type": "sampling", $(env_json),
    "working_set_mib": $total, "processes": $nproc, "hot_pct": $hot, "seconds": round(secs, 1),
    "scan_period_ms": $(cat $P/scan_period_ms), "sample_window_ms": $(cat $P/sample_window_ms),
    "passes": $passes, "regions": $regions, "regions_sampled": $((s1 - s0)),
    "rss_kb": $rss, "huge_kb_at_end": $huge,
    "threads": threads, "thread_cpu_s": cpu,
    "pct_of_one_cpu": round(100 * cpu / secs, 3),
    "cpu_per_pass_s": round(cpu / $passes, 3),
    "lock_holds": len(us),
    "lock_hold_p99_us": round(p99, 1) if us else None,
    "lock_hold_max_us": round(us[-1], 1) if us else None,
    "walks_s": [round(e - s, 3) for s, e in walks],
    "access_map_bytes": 64 * $regions + 576 * ${xa_nodes:-0},
}))
EOF
	unset xa_nodes
	tail -n 1 "$out" >&2
done
