# Sourced by the bench/*.sh scripts: their options, and, inside the guest,
# what every result records about the kernel it ran on.

THP=/sys/kernel/mm/transparent_hugepage

# options USAGE SPEC... -- "$@": a script's options, with getopts. A SPEC
# word "x:NAME" sets the variable NAME to the argument of -x, "x=NAME" sets
# it to 1 for -x; any other option runs the command USAGE (which exits).
options() {
	local _usage=$1 _letters= _w _opt OPTARG OPTIND=1
	local -A _var=() _arg=()
	shift
	for _w; do
		shift
		[ "$_w" = -- ] && break
		_letters+=${_w:0:1}
		_var[${_w:0:1}]=${_w:2}
		if [ "${_w:1:1}" = : ]; then
			_letters+=:
			_arg[${_w:0:1}]=1
		fi
	done
	while getopts "$_letters" _opt; do
		[ -n "${_var[$_opt]:-}" ] || "$_usage"
		if [ -n "${_arg[$_opt]:-}" ]; then
			printf -v "${_var[$_opt]}" %s "$OPTARG"
		else
			printf -v "${_var[$_opt]}" 1
		fi
	done
}

# The word in brackets of a sysfs choice file: "always [madvise] never" -> madvise.
current() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$1"; }

# The configuration flavour (scripts/build-kernel), from the release string.
flavour() {
	case $(uname -r) in
	*-hawkeye-debug*) echo debug ;;
	*-hawkeye*) echo release ;;
	*) echo other ;;
	esac
}

# Every readable THP, khugepaged and HawkEye knob (and read-only state such
# as debloat/current_threshold) and the vm sysctls the benchmarks touch, as
# JSON members "path below /sys/kernel/mm or /proc/sys": value.
knobs_json() {
	local f v sep=
	for f in $THP/enabled $THP/defrag $THP/use_zero_page $THP/khugepaged/* \
		$(find /sys/kernel/mm/hawkeye -type f -perm -0444 2>/dev/null | sort) \
		/proc/sys/vm/compaction_proactiveness /proc/sys/vm/compact_unevictable_allowed \
		/proc/sys/vm/swappiness /proc/sys/vm/overcommit_memory; do
		[ -f "$f" ] && [ -r "$f" ] || continue
		v=$(current "$f")
		v=${v:-$(cat "$f" 2>/dev/null)}
		[[ $v =~ ^-?[0-9]+$ ]] || v="\"${v//\"/}\""
		f=${f#/sys/kernel/mm/}
		printf '%s"%s": %s' "$sep" "${f#/proc/sys/}" "$v"
		sep=", "
	done
}

# The members that open every "env" line: kernel release, flavour, knobs at
# the start of the run (each configuration's own settings are recorded
# beside its results).
env_json() {
	printf '"kernel": "%s", "flavour": "%s", "knobs": {%s}' "$(uname -r)" "$(flavour)" "$(knobs_json)"
}

# "name ticks" (user + system clock ticks) of every HawkEye thread,
# khugepaged and kcompactd; zerod_ticks: the zeroing threads' summed.
thread_ticks() {
	local d comm stat
	for d in /proc/[0-9]*; do
		{ read -r comm <"$d/comm"; } 2>/dev/null || continue
		case $comm in hawkeye_* | khugepaged | kcompactd*) ;; *) continue ;; esac
		{ read -r stat <"$d/stat"; } 2>/dev/null || continue
		set -- ${stat##*) }
		echo "$comm $((${12} + ${13}))"
	done
}
zerod_ticks() { thread_ticks | awk '/^hawkeye_zerod/ {s += $2} END {print s + 0}'; }
# A counter of /proc/vmstat.
vm() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }
# hkstat NAME: one of HawkEye's counters (/sys/kernel/mm/hawkeye/stats/NAME).
hkstat() { cat /sys/kernel/mm/hawkeye/stats/"$1" 2>/dev/null; }

CG=/sys/fs/cgroup
# cg_new NAME: a fresh memory cgroup (so that its peak and events start at
# 0); cg_del NAME removes one, once its last process has exited.
cg_del() {
	for _ in $(seq 50); do
		[ -d $CG/$1 ] && ! rmdir $CG/$1 2>/dev/null || return 0
		sleep 0.2
	done
	return 1
}
cg_new() {
	cg_del "$1"
	mkdir $CG/$1
}
cg_stat() { awk -v k="$2" '$1 == k {print $2}' $CG/$1/memory.stat; }

# Pages the zeroing threads zeroed since boot; nothing without HawkEye.
prezero_pages() { hkstat prezero_pages; }
prezero_wasted() { hkstat prezero_wasted; }

# CPU time of the memory-management threads while a benchmark runs:
# HawkEye's (hawkeye_zerod*, hawkeye_debloatd, hawkeye_promoted) and
# those the baselines use (khugepaged, kcompactd*). A background loop reads
# their /proc/PID/stat once a second (bash builtins only: no forks), so a
# thread that stops during the run (a feature switched off) keeps the time
# it had a second before.
#   cpu_watch_start; ...; cpu_watch_stop EXPERIMENT CONFIG >>OUTFILE
# prints {"type": "thread_cpu", "experiment", "config", "seconds" (wall),
# "threads": {name: CPU seconds}, "clk_tck"}, and "prezero_mb", what the
# zeroing threads zeroed meanwhile (prezero_pages), and
# "prezero_wasted_mb", zeroed memory that allocations not needing zeroes
# took (prezero_wasted), on a HawkEye kernel.
cpu_watch_start() {
	cpu_watch_file=$(mktemp /tmp/cpu_watch.XXXXXX)
	cpu_watch_t0=$(date +%s.%N)
	cpu_watch_z0=$(prezero_pages)
	cpu_watch_w0=$(prezero_wasted)
	(
		declare -A first last name
		snap() {
			local d comm stat rest
			for d in /proc/[0-9]*; do
				{ read -r comm <"$d/comm"; } 2>/dev/null || continue
				case $comm in
				hawkeye_* | khugepaged | kcompactd*) ;;
				*) continue ;;
				esac
				{ read -r stat <"$d/stat"; } 2>/dev/null || continue
				rest=${stat##*) }
				set -- $rest
				# fields 14 and 15 (utime, stime) are 12 and 13 after ") "
				d=${d#/proc/}
				name[$d]=${comm%%[0-9]*}
				last[$d]=$((${12} + ${13}))
				[ -n "${first[$d]:-}" ] || first[$d]=0	# started during the run
			done
		}
		snap
		# Threads present at the start count from their time then.
		for p in "${!last[@]}"; do first[$p]=${last[$p]}; done
		trap 'exit 0' TERM
		while :; do
			snap
			: >"$cpu_watch_file.new"
			for p in "${!last[@]}"; do
				echo "${name[$p]} $((last[$p] - first[$p]))" >>"$cpu_watch_file.new"
			done
			mv "$cpu_watch_file.new" "$cpu_watch_file"
			sleep 1
		done
	) &
	cpu_watch_pid=$!
}

cpu_watch_stop() {
	sleep 1.2	# one more pass of the loop
	kill "$cpu_watch_pid" 2>/dev/null || true
	wait "$cpu_watch_pid" 2>/dev/null || true
	awk -v ex="$1" -v cfg="$2" -v t0="$cpu_watch_t0" -v t1="$(date +%s.%N)" \
		-v hz="$(getconf CLK_TCK)" -v z0="$cpu_watch_z0" -v z1="$(prezero_pages)" \
		-v w0="$cpu_watch_w0" -v w1="$(prezero_wasted)" -v page="$(getconf PAGESIZE)" '
		{ sum[$1] += $2 }
		END {
			printf "{\"type\": \"thread_cpu\", \"experiment\": \"%s\", \"config\": \"%s\", \"seconds\": %.1f, \"clk_tck\": %d, \"threads\": {", ex, cfg, t1 - t0, hz
			sep = ""
			for (n in sum) { printf "%s\"%s\": %.2f", sep, n, sum[n] / hz; sep = ", " }
			printf "}"
			if (z0 != "" && z1 != "")
				printf ", \"prezero_mb\": %.1f", (z1 - z0) * page / 1048576
			if (w0 != "" && w1 != "")
				printf ", \"prezero_wasted_mb\": %.1f", (w1 - w0) * page / 1048576
			print "}"
		}' "$cpu_watch_file"
	rm -f "$cpu_watch_file" "$cpu_watch_file.new"
}

# redis_server SOCK LOG [CGROUP]: a redis-server in the background on the
# unix socket SOCK only, without persistence and with THP as the system has
# it (--disable-thp no: Redis turns THP off for itself by default), in the
# cgroup directory CGROUP if given; its output to LOG. Sets redis_pid;
# returns once the socket exists (20 s at most).
redis_server() {
	rm -f "$1"
	sh -c '[ -z "$0" ] || echo $$ >"$0/cgroup.procs" && exec "$@"' "${3:-}" \
		redis-server --port 0 --unixsocket "$1" --save "" --appendonly no \
		--disable-thp no --daemonize no --loglevel warning >"$2" 2>&1 &
	redis_pid=$!
	for _ in $(seq 100); do [ -S "$1" ] && break; sleep 0.2; done
}

# ingens UTIL: HawkEye's "ingens" promotion policy (base pages at fault
# time, asynchronous promotion of regions UTIL percent populated); exits if
# the kernel has none.
ingens() {
	[ -d /sys/kernel/mm/hawkeye/ingens ] ||
		{ echo "$0: this kernel has no ingens policy" >&2; exit 1; }
	echo "$1" >/sys/kernel/mm/hawkeye/ingens/util_threshold
	echo ingens >/sys/kernel/mm/hawkeye/promote/policy
}
