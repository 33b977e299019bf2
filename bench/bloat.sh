#!/usr/bin/env bash
# The paper's Redis bloat experiment (§2.1, Figure 1, Table 7), scaled to
# the VM; run INSIDE the guest as root. For each configuration, one fresh
# redis-server:
#   P1  insert 4 KB values until the dataset is DATA_PCT of MemTotal
#   P2  delete a random DEL_PCT of the keys, wait SETTLE s (jemalloc gives
#       the pages back; khugepaged may collapse the holes back)
#   T1  GET throughput for TPUT s: no memory pressure yet
#   P3  insert 2 MB values until the dataset is back at the P1 size
#   T2  GET throughput for TPUT s, after SETTLE s: under pressure
# With -r, recovery then runs as deep as it goes before the settle
# wherever it is on: until whole rounds at the floor bar split nothing
# in the server; it stays so through T2.
# Without it a fill that stops between the watermarks starts no episode,
# and one that goes on stops wherever use fell below low_pct, so two
# configurations would compare two stopping points, not what recovery
# leaves of the same data. -r also compacts memory before P3, so that
# P3's 2 MB faults find free 2 MB blocks in every configuration alike:
# where they do not, they fall back to whatever mTHP size is on, which
# recovery to 4 KB never splits, and the configurations differ in what
# P3 faulted, not in what recovery did.
# After T2, the two 64 KB configurations record the server's 64 KB
# pieces that base pages map whole, none the zero page (redisbloat dense).
# Every second: the server's RSS, huge pages, swap, MemAvailable and the
# counters; JSON lines to OUTFILE. Configurations (all in this boot):
#   Linux-4KB  THP never                  Linux-2MB  THP always
#   HawkEye    THP always, pre-zeroing and bloat recovery on
#   HawkEye-64KB-split4KB  HawkEye with 64 KB mTHP on too:
#                  recovery splits a THP to base pages (debloat/mthp 0)
#   HawkEye-64KB   the same, splitting to the largest dense size (mthp 1)
# khugepaged scans faster than by default (the same for all), so that what
# it does happens within minutes. A configuration may be repeated as
# NAME/N (e.g. "Linux-2MB/1 HawkEye/1 Linux-2MB/2 HawkEye/2": interleaved
# repetitions); -n stops each after T1 (throughput without pressure only).
#
# Containers (-g FACTOR): the server runs in the memory cgroup bench-redis.
# Linux-4KB runs without a limit; its peak (memory.peak) times FACTOR is
# memory.max for the configurations after it, up to the next Linux-4KB (so
# interleaved rounds, "Linux-4KB/1 HawkEye/1 Linux-4KB/2 HawkEye/2", each
# have their own limit):
#   Linux-2MB-409  THP always, max_ptes_none 409: 6.12's THP shrinker
#                  splits underused THPs once reclaim runs (Meta's setting)
#   HawkEye-global HawkEye with recovery off in the cgroup: the paper's
#                  design, whose watermarks are the machine's
#   HawkEye-3      HawkEye, beside two xsbench containers that hawkeye-g
#                  promotes meanwhile: bench-xs1 (memory.thp.weight 100, one
#                  xsbench) and bench-xs2 (300), whose children a and b
#                  (100 and 300) run one each; XS_MB each, every region hot,
#                  faulted in base pages
#
#   bench/bloat.sh -o OUTFILE [-b BINDIR] [-d DATA_PCT] [-x DEL_PCT]
#                  [-s SETTLE] [-t TPUT] [-c CONFIGS] [-n] [-r] [-g FACTOR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=results/raw/bloat.jsonl bindir=$here/../build/bench
data_pct=65 del_pct=70 settle=60 tput=20 seed=1
configs="Linux-4KB Linux-2MB HawkEye" no_pressure= to_low= factor= XS_MB=${XS_MB:-160}
usage() {
	echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-d DATA_PCT] [-x DEL_PCT] [-s SETTLE] [-t TPUT] [-c CONFIGS] [-n] [-r] [-g FACTOR]" >&2
	exit 2
}
. "$here/lib.sh"
options usage o:out b:bindir d:data_pct x:del_pct s:settle t:tput c:configs n=no_pressure \
	r=to_low g:factor -- "$@"
KH=$THP/khugepaged
H=/sys/kernel/mm/hawkeye
command -v redis-server >/dev/null || { echo "bloat.sh: redis-server is not installed" >&2; exit 1; }
[ -d $H/debloat ] || { echo "bloat.sh: this kernel has no HawkEye bloat recovery" >&2; exit 1; }

sock=/tmp/bloat-redis.sock
client() { "$bindir/redisbloat" -s $sock "$@"; }
mem() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }

# Knobs as booted, put back at the end.
knobs="$THP/enabled $THP/defrag $KH/pages_to_scan $KH/scan_sleep_millisecs
	$KH/alloc_sleep_millisecs $KH/max_ptes_none $H/prezero/enabled $H/debloat/enabled
	$H/promote/policy $H/ingens/util_threshold $H/promote/batch $H/promote/sleep_ms
	$H/promote/scan_period_ms $THP/hugepages-64kB/enabled $H/debloat/mthp
	$H/debloat/high_pct $H/debloat/low_pct"
declare -A orig
for f in $knobs; do [ -e "$f" ] && orig[$f]=$(sed 's/.*\[\(.*\)\].*/\1/' "$f"); done
redis_pid= xs_pids=
reset() {
	[ -z "$redis_pid" ] || kill -9 "$redis_pid" 2>/dev/null || true
	[ -z "$xs_pids" ] || kill -9 $xs_pids 2>/dev/null || true
	for f in "${!orig[@]}"; do echo "${orig[$f]}" >"$f" 2>/dev/null || true; done
	# high_pct above low_pct at every step: raised first, then low_pct.
	for f in $H/debloat/high_pct $H/debloat/low_pct; do
		echo "${orig[$f]}" >"$f" 2>/dev/null || true
	done
}
trap reset EXIT

# -r moves the machine's watermark; a container has its own.
[ -z "$factor" ] || [ -z "$to_low" ] || { echo "bloat.sh: -r is for the machine, not with -g" >&2; exit 2; }
if [ -n "$factor" ]; then
	[ -e $CG/cgroup.controllers ] || mount -t cgroup2 none $CG
	echo +memory >$CG/cgroup.subtree_control
	case $configs in
	Linux-4KB*) ;;
	*) echo "bloat.sh: -g wants Linux-4KB first: its peak sets the limit" >&2; exit 2 ;;
	esac
fi
memtotal=$(mem MemTotal)
# About 4.2 kB per key: the 4 KB value's jemalloc slot plus the key and
# Redis's own structures.
keys=$((memtotal * data_pct / 100 * 10 / 42))
mkdir -p "$(dirname "$out")"
: >"$out"
printf '{"type": "env", %s, "mem_total_kb": %s, "swap_total_kb": %s, "cpus": %s, "keys": %s, "value_size": 4090, "data_pct": %s, "del_pct": %s, "xs_mb": %s, "redis": "%s"}\n' \
	"$(env_json)" "$memtotal" "$(mem SwapTotal)" "$(nproc)" $keys "$data_pct" "$del_pct" "$XS_MB" \
	"$(redis-server --version | awk '{print $3}' | cut -d= -f2)" >>"$out"

cg_event() { awk -v k="$2" '$1 == k {print $2}' $CG/$1/memory.events; }

# xs_start: HawkEye-3's xsbench containers, flat (bench-xs1 beside
# bench-xs2) and nested (bench-xs2/a beside bench-xs2/b), every region
# hot (-f 1.0): weights order promotions within a bucket of access
# coverage, so all regions are in one. Their memory is faulted in base
# pages (memory.thp.max 0 meanwhile: a THP fault takes base pages without
# allocating one, and khugepaged knows the process); hawkeye-g samples it
# under the cap until the coverages have climbed to the top bucket
# (xs_hot: an average climbs over several scans, and each bucket that
# the containers enter together starts its queue with a turn for each);
# then, from P1 on (xs_release), it promotes them.
XS_CGS="bench-xs1 bench-xs2/a bench-xs2/b" XS_ALL="bench-xs1 bench-xs2 bench-xs2/a bench-xs2/b"
xs_start() {
	local cg i
	xs_pids=
	cg_new bench-xs1
	echo 100 >$CG/bench-xs1/memory.thp.weight
	cg_del bench-xs2/a
	cg_del bench-xs2/b
	cg_new bench-xs2
	echo 300 >$CG/bench-xs2/memory.thp.weight
	echo +memory >$CG/bench-xs2/cgroup.subtree_control
	cg_new bench-xs2/a
	cg_new bench-xs2/b
	echo 100 >$CG/bench-xs2/a/memory.thp.weight
	echo 300 >$CG/bench-xs2/b/memory.thp.weight
	i=0
	for cg in $XS_CGS; do
		i=$((i + 1))
		echo 0 >$CG/$cg/memory.thp.max
		rm -f /tmp/bloat-xs$i.out
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' $CG/$cg \
			"$bindir/xsbench" -m "$XS_MB" -f 1.0 -w -d 100000 -l xs$i >/tmp/bloat-xs$i.out &
		xs_pids+=" $!"
	done
	for i in 1 2 3; do
		for _ in $(seq 1200); do grep -q ready /tmp/bloat-xs$i.out && break; sleep 0.2; done
	done
	# hawkeye-g (khugepaged leaves them alone), sampling them meanwhile.
	echo 2000 >$H/promote/sleep_ms
	echo 8 >$H/promote/batch
	echo 5000 >$H/promote/scan_period_ms
	echo hawkeye-g >$H/promote/policy
	kill -USR1 $xs_pids
	local until=$((SECONDS + 180))
	while ! xs_hot; do
		[ $SECONDS -lt $until ] || {
			echo "bloat.sh: $config: the containers' regions did not reach the top bucket" >&2
			return
		}
		sleep 1
	done
}
# Most of each container's regions in the top bucket (/proc/PID/hawkeye;
# the rest sit in the buckets below, 60 to 70 of 80 are in it once the
# averages have climbed).
xs_hot() {
	local p
	for p in $xs_pids; do
		awk '$1 == "regions" {r = $2} $1 == "bucket9" {h = $2}
		     END {exit !(r && 2 * h > r)}' /proc/$p/hawkeye || return 1
	done
}
xs_release() {
	local cg
	for cg in $XS_CGS; do echo max >$CG/$cg/memory.thp.max; done
}

setup() {
	for f in $THP/hugepages-64kB/enabled $H/debloat/mthp; do
		[ -z "${orig[$f]:-}" ] || echo "${orig[$f]}" >"$f"
	done
	echo 0 >$H/debloat/enabled
	echo 0 >$H/prezero/enabled
	[ -e $H/promote/policy ] && echo linux >$H/promote/policy
	echo 511 >$KH/max_ptes_none
	case $1 in
	Linux-4KB) echo never >$THP/enabled ;;
	Linux-2MB) echo always >$THP/enabled ;;
	Linux-2MB-409)
		echo always >$THP/enabled
		echo 409 >$KH/max_ptes_none ;;
	HawkEye-3)
		echo always >$THP/enabled
		echo 1 >$H/prezero/enabled
		echo 1 >$H/debloat/enabled
		xs_start ;;
	HawkEye | HawkEye-global)
		echo always >$THP/enabled
		echo 1 >$H/prezero/enabled
		echo 1 >$H/debloat/enabled ;;
	HawkEye-64KB-split4KB | HawkEye-64KB)
		[ -e $H/debloat/mthp ] || { echo "bloat.sh: no debloat/mthp" >&2; exit 1; }
		echo always >$THP/enabled
		echo always >$THP/hugepages-64kB/enabled
		echo 1 >$H/prezero/enabled
		echo 1 >$H/debloat/enabled
		[ "$1" = HawkEye-64KB-split4KB ] || echo 1 >$H/debloat/mthp ;;
	HawkEye-no-prezero)
		# Bloat recovery alone: what pre-zeroing costs beside Redis.
		echo always >$THP/enabled
		echo 1 >$H/debloat/enabled ;;
	Ingens-90 | Ingens-50)
		# Table 7's Ingens columns: the ingens policy at a 90% / 50%
		# utilisation threshold (its FMFI switch as booted).
		echo always >$THP/enabled
		ingens "${1#Ingens-}" ;;
	*) echo "bloat.sh: unknown configuration $1" >&2; exit 2 ;;
	esac
	echo madvise >$THP/defrag
	echo 32768 >$KH/pages_to_scan
	echo 200 >$KH/scan_sleep_millisecs
	echo 200 >$KH/alloc_sleep_millisecs
}

phase() {
	echo "$1" >/tmp/bloat.phase
	echo "bloat.sh: $config: $1" >&2
}

# A JSON line for one step; an "error" if the server died under it.
step() {
	local name=$1 r
	shift
	if r=$(client "$@"); then
		echo "${r%\}}, \"type\": \"step\", \"config\": \"$config\", \"phase\": \"$name\"}" >>"$out"
	else
		printf '{"type": "step", "config": "%s", "phase": "%s", "error": "server gone"}\n' \
			"$config" "$name" >>"$out"
		return 1
	fi
}

# recover_deep: recovery without a low watermark (low_pct 0, high_pct 1:
# an episode starts at once and never ends by itself) until two whole
# rounds at the floor bar (threshold / 8) split nothing in the server
# (its debloat_splits; a split can fail once, on a folio it cannot lock).
# The bar halves only at the end of a round, so once it reads the floor,
# every round counted after the next one began at it. The splits are read
# before the rounds at the start and after them at each check, so the
# splits of every round counted in between are seen. The watermarks stay
# so through T2 (deep_end puts them back): with low_pct back, khugepaged
# would collapse what recovery split. A JSON line with the use before and
# after, the rounds and whether it got there (reached 0 after 900 s,
# recovery still splitting in the server, or once the server is gone).
use_pct() {
	awk '$1 == "MemTotal:" {t = $2} $1 == "MemAvailable:" {a = $2}
	     END {printf "%.2f", 100 * (t - a) / t}' /proc/meminfo
}
splits() { awk '$1 == "debloat_splits" {print $2}' /proc/$redis_pid/hawkeye 2>/dev/null || echo gone; }
recover_deep() {
	local floor before t0 rounds0 r r0= s s0 reached=0
	floor=$(($(cat $H/debloat/threshold) / 8))
	[ $floor -ge 1 ] || floor=1
	before=$(use_pct) t0=$SECONDS rounds0=$(hkstat debloat_round)
	echo 0 >$H/debloat/low_pct
	echo 1 >$H/debloat/high_pct
	while [ $((SECONDS - t0)) -lt 900 ] && kill -0 "$redis_pid" 2>/dev/null; do
		if [ "$(cat $H/debloat/current_threshold)" -gt $floor ]; then
			r0=
		elif [ -z "$r0" ]; then
			s0=$(splits) r0=$(hkstat debloat_round)
		else
			r=$(hkstat debloat_round) s=$(splits)
			if [ "$s" != "$s0" ]; then
				r0=
			elif [ "$r" -ge $((r0 + 3)) ]; then
				reached=1
				break
			fi
		fi
		sleep 0.5
	done
	printf '{"type": "recover", "config": "%s", "use_pct_before": %s, "use_pct_after": %s, "rounds": %s, "reached": %s, "seconds": %s}\n' \
		"$config" "$before" "$(use_pct)" $(($(hkstat debloat_round) - rounds0)) \
		$reached $((SECONDS - t0)) >>"$out"
}
deep_end() {
	for f in $H/debloat/high_pct $H/debloat/low_pct; do echo "${orig[$f]}" >"$f"; done
}

for config in $configs; do
	setup "${config%/*}"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory
	cgs=
	if [ -n "$factor" ]; then
		cg_new bench-redis
		# Linux-4KB runs without a limit: its peak sets the next ones'.
		[ "${config%/*}" != Linux-4KB ] || limit=
		[ -z "${limit:-}" ] || echo "$limit" >$CG/bench-redis/memory.max
		# The paper's design: recovery for the machine only.
		[ "${config%/*}" != HawkEye-global ] || echo 0 >$CG/bench-redis/memory.thp.shrink_underused
		cgs="bench-redis${xs_pids:+ $XS_ALL}"
	fi
	redis_server $sock /tmp/bloat-redis.log ${factor:+$CG/bench-redis}
	oom0=$(vm oom_kill)
	phase P1
	start=$(date +%s.%N)
	"$bindir/redisbloat" watch "$redis_pid" "$config" /tmp/bloat.phase $cgs >>"$out" &
	sampler_pid=$!
	[ -z "$xs_pids" ] || xs_release
	cpu_watch_start
	ok=1
	step P1 fill key $keys 4090 || ok=0
	if [ $ok = 1 ]; then
		phase P2
		out_del=$(client del key $keys "$del_pct" $seed) || ok=0
		echo "${out_del%\}}, \"type\": \"step\", \"config\": \"$config\", \"phase\": \"P2\"}" >>"$out"
		sleep "$settle"
	fi
	if [ $ok = 1 ]; then
		phase T1
		step T1 get key $keys "$del_pct" $seed "$tput" || ok=0
	fi
	if [ $ok = 1 ] && [ -z "$no_pressure" ]; then
		# As many 2 MB values as the 4 KB ones deleted took.
		deleted=$(echo "$out_del" | sed 's/.*"keys": \([0-9]*\).*/\1/')
		big=$(((deleted * 4090 + 2097151) / 2097152))
		[ -z "$to_low" ] || echo 1 >/proc/sys/vm/compact_memory
		phase P3
		step P3 fill big $big 2097152 || ok=0
	fi
	if [ $ok = 1 ] && [ -z "$no_pressure" ] && [ -n "$to_low" ] &&
	   [ "$(cat $H/debloat/enabled)" = 1 ]; then
		phase recover
		recover_deep
	fi
	if [ $ok = 1 ] && [ -z "$no_pressure" ]; then
		phase settle
		sleep "$settle"
		phase T2
		step T2 get key $keys "$del_pct" $seed "$tput" || ok=0
	fi
	# Samples from here on are in no measured phase.
	phase end
	# The mTHP pair, after T2: the server's 64 KB pieces that base pages
	# map whole, none of them the zero page.
	case $ok/$no_pressure/${config%/*} in
	1//HawkEye-64KB*)
		r=$("$bindir/redisbloat" dense "$redis_pid") &&
			echo "${r%\}}, \"type\": \"dense\", \"config\": \"$config\"}" >>"$out" ;;
	esac
	[ -z "$to_low" ] || deep_end
	alive=0
	kill -0 "$redis_pid" 2>/dev/null && alive=1
	printf '{"type": "end", "config": "%s", "completed": %s, "server_alive": %s, "oom_kills": %s, "seconds": %s}\n' \
		"$config" $ok $alive $(($(vm oom_kill) - oom0)) \
		"$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')" >>"$out"
	# HawkEye-3's xsbench containers, while they run.
	xs_json=
	for cg in ${xs_pids:+$XS_ALL}; do
		xs_json+=$(printf '%s"%s": {"weight": %s, "promoted": %s, "thp_kb": %s, "thp_split": %s}' \
			"${xs_json:+, }" $cg "$(cat $CG/$cg/memory.thp.weight)" \
			"$(cg_stat $cg hawkeye_promote_success)" \
			$(($(cg_stat $cg anon_thp) / 1024)) \
			"$(cg_stat $cg hawkeye_debloat_thp_split)")
	done
	cpu_watch_stop bloat "$config" >>"$out"
	kill -9 "$redis_pid" 2>/dev/null || true
	wait "$redis_pid" 2>/dev/null || true
	redis_pid=
	if [ -n "$xs_pids" ]; then
		kill -9 $xs_pids 2>/dev/null || true
		wait $xs_pids 2>/dev/null || true
		xs_pids=
	fi
	wait "$sampler_pid" 2>/dev/null || true
	if [ -n "$factor" ]; then
		r=bench-redis
		printf '{"type": "container", "config": "%s", "limit_kb": %s, "peak_kb": %s, "swap_peak_kb": %s, "oom_kills": %s, "pgscan": %s, "thp_split": %s, "zero_freed": %s, "xs": {' \
			"$config" "$(($(sed 's/max/0/' $CG/$r/memory.max) / 1024))" \
			$(($(cat $CG/$r/memory.peak) / 1024)) $(($(cat $CG/$r/memory.swap.peak) / 1024)) \
			"$(cg_event $r oom_kill)" "$(cg_stat $r pgscan)" \
			"$(cg_stat $r hawkeye_debloat_thp_split)" "$(cg_stat $r hawkeye_debloat_zero_pages_freed)" >>"$out"
		echo "$xs_json}}" >>"$out"
		[ "${config%/*}" != Linux-4KB ] || limit=$(awk -v p="$(cat $CG/$r/memory.peak)" -v f="$factor" \
			'BEGIN {printf "%d", p * f / 4096 * 4096}')
	fi
done
echo "bloat.sh: done; raw results in $out" >&2
