#!/usr/bin/env bash
# File streaming at memory.max beside a large process of base pages, bloat
# recovery on against off: what recovery costs a container whose charges
# hit its limit all the time and which has nothing to recover (no charge
# may walk page tables, and page cache starts no episode). Run INSIDE the
# guest as root. Each round, for each configuration (off and on, in turn
# first: off on, on off, ...; one read before the first round is not
# recorded):
#   a fresh memory cgroup bench-stream, memory.max MAX_MB, no swap;
#   a process there holding HOLD_MB of anonymous memory in 4 KB pages
#   (THP madvise, the process does not madvise): half the limit, so that
#   the cgroup's use net of page cache stays well below low_pct (where an
#   episode may start under pressure) and only page cache fills the rest;
#   FILE_MB of the largest virtio disk read through its page cache, by dd
#   in 1 MB blocks, caches dropped first.
# One JSON line per read: MB/s, and what reclaim and recovery did meanwhile
# (the cgroup's pgscan, the machine's recovery episodes in cgroups, THPs
# scanned, bytes read by recovery). bench/streaming_report.py summarises.
#
#   bench/streaming.sh -o OUTFILE [-b BINDIR] [-r ROUNDS] [-m MAX_MB] [-a HOLD_MB] [-f FILE_MB]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=results/raw/streaming.jsonl bindir=$here/../build/bench
rounds=5 max_mb=96 hold_mb=48 file_mb=960
usage() {
	echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-r ROUNDS] [-m MAX_MB] [-a HOLD_MB] [-f FILE_MB]" >&2
	exit 2
}
. "$here/lib.sh"
options usage o:out b:bindir r:rounds m:max_mb a:hold_mb f:file_mb -- "$@"
H=/sys/kernel/mm/hawkeye
[ -d $H/debloat ] || { echo "streaming.sh: this kernel has no HawkEye bloat recovery" >&2; exit 1; }

# The largest virtio disk of at least FILE_MB (the guest's swap disk).
disk= best=0
for f in /sys/block/vd*/size; do
	[ -e "$f" ] || continue
	s=$(cat "$f")
	[ "$s" -lt $((file_mb * 2048)) ] || [ "$s" -le "$best" ] || { best=$s disk=/dev/$(basename "$(dirname "$f")"); }
done
[ -n "$disk" ] || { echo "streaming.sh: no virtio disk of $file_mb MB to read" >&2; exit 1; }

knobs="$THP/enabled $H/debloat/enabled $H/prezero/enabled"
declare -A orig
for f in $knobs; do orig[$f]=$(current "$f"); orig[$f]=${orig[$f]:-$(cat "$f")}; done
holder=
reset() {
	[ -z "$holder" ] || kill -9 "$holder" 2>/dev/null || true
	for f in "${!orig[@]}"; do echo "${orig[$f]}" >"$f" 2>/dev/null || true; done
}
trap reset EXIT

[ -e $CG/cgroup.controllers ] || mount -t cgroup2 none $CG
echo +memory >$CG/cgroup.subtree_control
cg_fresh() {
	cg_new bench-stream
	echo $((max_mb << 20)) >$CG/bench-stream/memory.max
	echo 0 >$CG/bench-stream/memory.swap.max
}

mkdir -p "$(dirname "$out")"
printf '{"type": "env", %s, "disk": "%s", "max_mb": %s, "hold_mb": %s, "file_mb": %s, "rounds": %s}\n' \
	"$(env_json)" "$disk" "$max_mb" "$hold_mb" "$file_mb" "$rounds" >"$out"
echo madvise >$THP/enabled
echo 0 >$H/prezero/enabled
for round in 0 $(seq "$rounds"); do
	order="off on"
	[ $((round % 2)) = 1 ] || order="on off"
	[ "$round" != 0 ] || order=off
	for config in $order; do
		echo "streaming.sh: round $round, recovery $config" >&2
		echo $([ $config = on ] && echo 1 || echo 0) >$H/debloat/enabled
		cg_fresh
		rm -f /tmp/streaming-holder.out
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' $CG/bench-stream \
			"$bindir/sequential" -N -m "$hold_mb" -w -l holder >/tmp/streaming-holder.out &
		holder=$!
		until grep -qs ready /tmp/streaming-holder.out; do
			kill -0 $holder 2>/dev/null || { echo "streaming.sh: the holder died" >&2; exit 1; }
			sleep 0.2
		done
		sync
		echo 3 >/proc/sys/vm/drop_caches
		ep0=$(hkstat debloat_memcg_episode) sc0=$(hkstat debloat_thp_scanned)
		rd0=$(hkstat debloat_bytes_read)
		t0=$(date +%s.%N)
		sh -c 'echo $$ >"$0/cgroup.procs" && exec dd if="$1" of=/dev/null bs=1M count="$2" status=none' \
			$CG/bench-stream "$disk" "$file_mb"
		t1=$(date +%s.%N)
		# Round 0 warms the disk and the caches up: not recorded.
		[ "$round" = 0 ] || printf '{"type": "stream", "config": "%s", "round": %s, "seconds": %s, "mb_per_s": %s, "peak_kb": %s, "anon_kb": %s, "pgscan": %s, "episodes": %s, "thp_scanned": %s, "bytes_read": %s}\n' \
			$config "$round" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')" \
			"$(awk -v a="$t0" -v b="$t1" -v m="$file_mb" 'BEGIN {printf "%.2f", m / (b - a)}')" \
			$(($(cat $CG/bench-stream/memory.peak) / 1024)) $(($(cg_stat bench-stream anon) / 1024)) \
			"$(cg_stat bench-stream pgscan)" $(($(hkstat debloat_memcg_episode) - ep0)) \
			$(($(hkstat debloat_thp_scanned) - sc0)) $(($(hkstat debloat_bytes_read) - rd0)) >>"$out"
		kill -9 $holder 2>/dev/null || true
		wait $holder 2>/dev/null || true
		holder=
	done
done
cg_del bench-stream || true
echo "streaming.sh: done; raw results in $out" >&2
