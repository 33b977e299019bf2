#!/usr/bin/env bash
# HawkEye-G's sampling cost (issue 5): CPU time of the hawkeye_promoted
# thread while a process keeps a MIB MiB working set of base pages hot, at
# the default scan period and sample window, over SECS seconds; promotion
# itself is held off (sleep_ms = 1 h) so that the whole working set stays
# sampled. Run INSIDE the guest as root; one JSON line to OUTFILE.
#   bench/sampling.sh -o OUTFILE [-b BINDIR] [-m MIB] [-s SECS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=results/raw/sampling.jsonl bindir=$here/../build/bench mib=1024 secs=125
while getopts o:b:m:s: opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) bindir=$OPTARG ;;
	m) mib=$OPTARG ;;
	s) secs=$OPTARG ;;
	*) echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-m MIB] [-s SECS]" >&2; exit 2 ;;
	esac
done
. "$here/lib.sh"
P=/sys/kernel/mm/hawkeye/promote
[ -d $P ] || { echo "sampling.sh: this kernel has no HawkEye promotion" >&2; exit 1; }
orig_thp=$(current $THP/enabled)
orig_sleep=$(cat $P/sleep_ms)
reset() {
	echo linux >$P/policy
	echo "$orig_sleep" >$P/sleep_ms
	echo "$orig_thp" >$THP/enabled
}
trap reset EXIT
# utime + stime of a thread, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo 3600000 >$P/sleep_ms
echo hawkeye-g >$P/policy
# madvise: the program's faults get base pages (no hint yet); its
# MADV_HUGEPAGE then makes the range eligible, and registers the process.
echo madvise >$THP/enabled
fifo=/tmp/sampling.fifo
rm -f $fifo && mkfifo $fifo
"$bindir/sampling" "$mib" $((secs + 60)) >$fifo &
pid=$!
read -r _ <$fifo
tid=$(pgrep -x hawkeye_promoted)
c0=$(cpu_ticks "$tid") t0=$(date +%s.%N) s0=$(awk '$1 == "hawkeye_promote_sampled" {print $2}' /proc/vmstat)
sleep "$secs"
c1=$(cpu_ticks "$tid") t1=$(date +%s.%N) s1=$(awk '$1 == "hawkeye_promote_sampled" {print $2}' /proc/vmstat)
huge=$(awk '/^AnonHugePages:/ {print $2}' /proc/$pid/smaps_rollup)
kill "$pid"
mkdir -p "$(dirname "$out")"
awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v t0="$t0" -v t1="$t1" -v mib="$mib" \
	-v sampled="$((s1 - s0))" -v huge="$huge" -v period="$(cat $P/scan_period_ms)" \
	-v window="$(cat $P/sample_window_ms)" -v env="$(env_json)" 'BEGIN {
	printf "{\"type\": \"sampling\", %s, \"working_set_mib\": %d, \"seconds\": %.1f, \"scan_period_ms\": %d, \"sample_window_ms\": %d, \"regions_sampled\": %d, \"huge_kb_at_end\": %d, \"thread_cpu_s\": %.2f, \"pct_of_one_cpu\": %.3f}\n",
		env, mib, t1 - t0, period, window, sampled, huge, c / hz, 100 * c / hz / (t1 - t0) }' | tee -a "$out"
