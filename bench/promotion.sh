#!/usr/bin/env bash
# Fine-grained huge page promotion benchmarks (paper section 4, Figures 5-7,
# Table 5, in miniature), run INSIDE the guest as root, all in one boot;
# JSON lines to OUTFILE (bench/promotion_report.py summarises them):
#   single    one workload (xsbench, graph500) per policy: memory is
#             fragmented, the workload faults its memory (base pages), the
#             fragmenter lets go, and promotion has to find the hot regions
#             (top of the mapping) with a small, equal budget
#   fairness  three instances of one workload started together, same steps
#   order     the paper's Figure 8 in miniature: xsbench (TLB-sensitive)
#             beside a lightly loaded Redis (REDIS_MB of 1 KB values, read
#             at REDIS_RATE GET/s), xsbench launched before Redis
#             ("workload-first") or after it ("redis-first"); THP enabled
#             is "always" (not madvise) so that Redis's heap is eligible too.
#             Linux promotes in launch order, HawkEye by access coverage
#   pmu       (not by default) the paper's Table 9 in miniature: a random
#             reader (xsbench -f 1.0) and a sequential one (sequential.c),
#             equal access coverage, run together under hawkeye-g and under
#             hawkeye-pmu with the same budget; MMU overheads measured by
#             hawkeye-pmud (from the PMU, or from the TLB model's counters
#             under TLBMODEL) or, without either (exit status 3), synthetic
#
#   bench/promotion.sh [-o OUTFILE] [-b BINDIR] [-w WORKLOADS] [-p POLICIES]
#                      [-f FAIR_WORKLOADS] [-x EXPERIMENTS]
#   bench/promotion.sh -V [-k BZIMAGE] [-r RESULTS]   (on the host: build, boot,
#                      run, report into RESULTS/, default results/; with
#                      TLBMODEL=FILE set, under the TLB model, its counters
#                      to FILE, and hawkeye-pmud measures from them with the
#                      CPI calibrated in results/modeled-tlb.json:
#                      bench/README.md, "Huge pages under a TLB model")
#
# Policies: none (THP never: base pages only, the baseline), linux
# (khugepaged), and the HawkEye kernel's hawkeye-g, ingens and freebsd
# (/sys/kernel/mm/hawkeye/promote/policy; a policy the kernel lacks is
# recorded as unavailable and skipped);
# the pmu experiment runs hawkeye-g and hawkeye-pmu (PMU_POLICIES).
# Settings come from the environment (defaults; QUICK=1 ones in brackets):
#   MB=512 [128]             footprint of one single-run workload
#   FAIR_MB=256 [64]         footprint of each fairness instance
#   HOT=0.125                hot fraction (top of the mapping)
#   DURATION=180 [40]        seconds of a single run
#   ROUNDS=3 [1]             single: rounds of every workload and policy,
#                            interleaved (round 1's runs, then round 2's)
#   ROUNDS_fairness=1, ROUNDS_order=1, ROUNDS_pmu=1   the same for the other
#                            experiments (make demo: 1 each, to fit a working
#                            session; each round of the three adds about
#                            10-18 minutes, as fast as the host is)
#   FAIR_SECONDS=120 [20]    work of a fairness instance: what the baseline
#                            (none, single run) does in this many seconds
#   PAGES_TO_SCAN=1024       promotion budget: khugepaged pages_to_scan; HawkEye
#   SCAN_SLEEP_MS=1000         batch = PAGES_TO_SCAN / 512, sleep_ms = SCAN_SLEEP_MS
#   SCAN_PERIOD_MS=10000 [5000], SAMPLE_WINDOW_MS=1000   HawkEye sampling
#   FRESH_MS=(SCAN_PERIOD_MS)  hawkeye-g and -pmu: a new process is sampled
#                            window after window this long (promote/fresh_ms;
#                            0: the paper's cadence); the baselines get 0
#   LEAVE_MB=32              what the fragmenter leaves free while it takes memory
#   MEM=2G [1G]              guest memory (-V only)
#   PMU_MB=128 [48]          pmu: footprint of each of the two workloads
#   PMU_SECONDS=240 [90]     pmu: seconds of a run (hawkeye-g must promote
#                            both: 2 x PMU_MB / 2 regions at <= 2 a second)
#   ORDER_MB=128 [64]        order: xsbench's footprint
#   ORDER_SECONDS=90 [40]    order: seconds of xsbench's run
#   REDIS_MB=96 [48], REDIS_RATE=1000   order: Redis's data and its load
#   ORDER_POLICIES=(-p's)    order: the policies it runs
#   POLICIES_<workload>      single: the policies for that workload (e.g.
#                            POLICIES_graph500="none linux hawkeye-g")
#   PMU_RANDOM=6000, PMU_SEQUENTIAL=50   pmu: synthetic MMU overheads in
#                            1/100 % (the paper's Table 9: 60 %, 0.5 %), used
#                            when hawkeye-pmud finds no PMU
# The raw output goes to results/raw/promotion.jsonl, or pmu.jsonl for -x pmu
# alone, order.jsonl for -x order alone.
# QUICK=1 also runs the fairness experiment with xsbench only and without
# its "none" baseline.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out='' bindir=$repo/build/bench
workloads="xsbench graph500" policies="none linux hawkeye-g" experiments="single fairness"
fair_workloads=
host_mode='' kernel='' resdir=results
usage() {
	echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-w WORKLOADS] [-p POLICIES] [-f FAIR_WORKLOADS] [-x EXPERIMENTS]" >&2
	echo "       $0 -V [-k BZIMAGE] [-r RESULTS] [same options]   (host: build, boot the release kernel, run, report)" >&2
	exit 2
}
. "$here/lib.sh"
options usage o:out b:bindir w:workloads p:policies f:fair_workloads x:experiments \
	V=host_mode k:kernel r:resdir -- "$@"

if [ -n "${QUICK:-}" ]; then
	MB=${MB:-128} FAIR_MB=${FAIR_MB:-64} DURATION=${DURATION:-40} ROUNDS=${ROUNDS:-1}
	FAIR_SECONDS=${FAIR_SECONDS:-20} SCAN_PERIOD_MS=${SCAN_PERIOD_MS:-5000}
	fair_workloads=${fair_workloads:-xsbench}
	PMU_MB=${PMU_MB:-48} PMU_SECONDS=${PMU_SECONDS:-90}
	ORDER_MB=${ORDER_MB:-64} ORDER_SECONDS=${ORDER_SECONDS:-40} REDIS_MB=${REDIS_MB:-48}
fi
ORDER_MB=${ORDER_MB:-128} ORDER_SECONDS=${ORDER_SECONDS:-90} REDIS_MB=${REDIS_MB:-96}
REDIS_RATE=${REDIS_RATE:-1000} ORDER_POLICIES=${ORDER_POLICIES:-$policies}
MB=${MB:-512} FAIR_MB=${FAIR_MB:-256} HOT=${HOT:-0.125} DURATION=${DURATION:-180}
ROUNDS=${ROUNDS:-3}
ROUNDS_fairness=${ROUNDS_fairness:-1} ROUNDS_order=${ROUNDS_order:-1} ROUNDS_pmu=${ROUNDS_pmu:-1}
FAIR_SECONDS=${FAIR_SECONDS:-120} PAGES_TO_SCAN=${PAGES_TO_SCAN:-1024}
SCAN_SLEEP_MS=${SCAN_SLEEP_MS:-1000} SCAN_PERIOD_MS=${SCAN_PERIOD_MS:-10000}
SAMPLE_WINDOW_MS=${SAMPLE_WINDOW_MS:-1000} LEAVE_MB=${LEAVE_MB:-32}
FRESH_MS=${FRESH_MS:-$SCAN_PERIOD_MS}
fair_workloads=${fair_workloads:-$workloads}
PMU_MB=${PMU_MB:-128} PMU_SECONDS=${PMU_SECONDS:-240} PMU_RANDOM=${PMU_RANDOM:-6000}
PMU_SEQUENTIAL=${PMU_SEQUENTIAL:-50} PMU_POLICIES=${PMU_POLICIES:-hawkeye-g hawkeye-pmu}
PMUD=${PMUD:-$repo/build/tools/hawkeye-pmud}
[ "$experiments" = pmu ] && out=${out:-results/raw/pmu.jsonl}
[ "$experiments" = order ] && out=${out:-results/raw/order.jsonl}
out=${out:-results/raw/promotion.jsonl}

# Host mode: compile the programs, boot the release kernel once with this
# script inside, then build the report.
if [ -n "$host_mode" ]; then
	cd "$repo"
	mkdir -p build/bench "$(dirname "$out")" "$resdir"
	for prog in fragment xsbench graph500 sequential redisbloat; do
		cc -O2 -Wall -Wextra -Werror -o "build/bench/$prog" "bench/$prog.c"
	done
	# The pmu experiment's daemon (needs libpfm4); without it: synthetic.
	if [[ " $experiments " == *" pmu "* ]] && ! [ "$PMUD" -nt tools/hawkeye-pmud.c ]; then
		mkdir -p "$(dirname "$PMUD")"
		cc -O2 -o "$PMUD" tools/hawkeye-pmud.c -lpfm ||
			echo "promotion.sh: no hawkeye-pmud (libpfm4?): pmu overheads will be synthetic" >&2
	fi
	# QUICK needs less than 1 GiB, and a smaller guest fragments faster.
	vmargs=(--prealloc --flavour "${FLAVOUR:-release}" --mem "${MEM:-$([ -n "${QUICK:-}" ] && echo 1G || echo 2G)}"
		--timeout 7200)
	[ -n "$kernel" ] && vmargs+=(--kernel "$kernel")
	# TLBMODEL=FILE: under QEMU 10 with the TLB model, its counters to FILE.
	report_args=()
	if [ -n "${TLBMODEL:-}" ]; then
		vmargs+=(--tlbmodel "$TLBMODEL")
		# The guest reads the host's files where they are (read-only).
		cpi=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["calibration"]["cpi"] or "")' \
			results/modeled-tlb.json) && [ -n "$cpi" ] ||
			{ echo "promotion.sh: no calibrated CPI in results/modeled-tlb.json" >&2; exit 1; }
		PMUD_ARGS="--model $(realpath -m "$TLBMODEL") --cpi $cpi"
		report_args=(--model "$TLBMODEL" --cpi "$cpi")
	fi
	start=$SECONDS
	scripts/vm-run "${vmargs[@]}" -- env QUICK="${QUICK:-}" MB="$MB" FAIR_MB="$FAIR_MB" \
		HOT="$HOT" DURATION="$DURATION" ROUNDS="$ROUNDS" ROUNDS_fairness="$ROUNDS_fairness" \
		ROUNDS_order="$ROUNDS_order" ROUNDS_pmu="$ROUNDS_pmu" FAIR_SECONDS="$FAIR_SECONDS" \
		PAGES_TO_SCAN="$PAGES_TO_SCAN" SCAN_SLEEP_MS="$SCAN_SLEEP_MS" \
		SCAN_PERIOD_MS="$SCAN_PERIOD_MS" SAMPLE_WINDOW_MS="$SAMPLE_WINDOW_MS" \
		FRESH_MS="$FRESH_MS" LEAVE_MB="$LEAVE_MB" PMU_MB="$PMU_MB" PMU_SECONDS="$PMU_SECONDS" \
		PMU_RANDOM="$PMU_RANDOM" PMU_SEQUENTIAL="$PMU_SEQUENTIAL" \
		PMU_POLICIES="$PMU_POLICIES" PMUD="$PMUD" PMUD_ARGS="${PMUD_ARGS:-}" ORDER_MB="$ORDER_MB" \
		ORDER_SECONDS="$ORDER_SECONDS" REDIS_MB="$REDIS_MB" REDIS_RATE="$REDIS_RATE" \
		ORDER_POLICIES="$ORDER_POLICIES" POLICIES_xsbench="${POLICIES_xsbench:-}" \
		POLICIES_graph500="${POLICIES_graph500:-}" bench/promotion.sh -o "$out" -w "$workloads" \
		-p "$policies" -f "$fair_workloads" -x "$experiments"
	# The venv has matplotlib (for the plots); else the system's Python.
	py=build/venv/bin/python
	[ -x "$py" ] || py=python3
	"$py" bench/promotion_report.py "$out" -o "$resdir/promotion.json" "${report_args[@]}"
	echo "promotion.sh: done in $((SECONDS - start)) s" >&2
	exit 0
fi

[ "$(id -u)" = 0 ] || { echo "promotion.sh: run it as root in the guest (or -V on the host)" >&2; exit 1; }
progs="fragment xsbench graph500"
[[ " $experiments " == *" pmu "* ]] && progs+=" sequential"
if [[ " $experiments " == *" order "* ]]; then
	progs+=" redisbloat"
	command -v redis-server >/dev/null || { echo "promotion.sh: order needs redis-server" >&2; exit 1; }
fi
for prog in $progs; do
	[ -x "$bindir/$prog" ] || { echo "promotion.sh: no $bindir/$prog (build it, or use -V)" >&2; exit 1; }
done
# The system's Python (a pyenv shim may not work in the guest's read-only view).
PY=$(command -v /usr/bin/python3 || command -v python3) ||
	{ echo "promotion.sh: needs python3 in the guest" >&2; exit 1; }

KH=$THP/khugepaged
HK=/sys/kernel/mm/hawkeye/promote
VM=/proc/sys/vm
# The policy file may be a choice file ("[linux] hawkeye-g") or hold one word.
policy_now() { local v; v=$(current $HK/policy); echo "${v:-$(cat $HK/policy)}"; }

# Settings this script changes, saved at start and put back at the end.
SAVED=("$THP/enabled" "$THP/defrag" "$KH/pages_to_scan" "$KH/scan_sleep_millisecs"
	"$KH/alloc_sleep_millisecs" "$KH/defrag" "$VM/compact_unevictable_allowed"
	"$VM/compaction_proactiveness" "$HK/policy" "$HK/batch" "$HK/sleep_ms"
	"$HK/scan_period_ms" "$HK/sample_window_ms" "$HK/pmu_ttl_ms" "$HK/fresh_ms")
declare -A orig
for f in "${SAVED[@]}"; do
	[ -e "$f" ] || continue
	v=$(current "$f")
	orig[$f]=${v:-$(cat "$f")}
done
tmp=$(mktemp -d /tmp/promotion.XXXXXX)
bg_pids=()
restore() {
	local f p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for f in "${!orig[@]}"; do echo "${orig[$f]}" >"$f" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap restore EXIT

# Policy and the common promotion budget. Returns 1 if POLICY is unavailable.
setup_policy() {
	local policy=$1 fresh
	echo never >$THP/defrag	# faults never compact: they get a huge page only if one is free
	echo "$PAGES_TO_SCAN" >$KH/pages_to_scan
	echo "$SCAN_SLEEP_MS" >$KH/scan_sleep_millisecs
	echo "$SCAN_SLEEP_MS" >$KH/alloc_sleep_millisecs
	echo 1 >$KH/defrag	# khugepaged may compact
	echo 0 >$VM/compact_unevictable_allowed	# compaction leaves mlocked pages alone
	echo 0 >$VM/compaction_proactiveness
	if [ -e $HK/policy ]; then
		echo $((PAGES_TO_SCAN / 512)) >$HK/batch
		echo "$SCAN_SLEEP_MS" >$HK/sleep_ms
		[ -e $HK/scan_period_ms ] && echo "$SCAN_PERIOD_MS" >$HK/scan_period_ms
		[ -e $HK/sample_window_ms ] && echo "$SAMPLE_WINDOW_MS" >$HK/sample_window_ms
		case $policy in hawkeye-*) fresh=$FRESH_MS ;; *) fresh=0 ;; esac
		[ -e $HK/fresh_ms ] && echo "$fresh" >$HK/fresh_ms
	fi
	case $policy in
	none)
		echo never >$THP/enabled
		if [ -e $HK/policy ]; then echo linux >$HK/policy; fi ;;
	linux)
		echo madvise >$THP/enabled
		if [ -e $HK/policy ]; then echo linux >$HK/policy; fi ;;
	hawkeye-g | hawkeye-pmu | ingens | freebsd)
		echo madvise >$THP/enabled
		[ -e $HK/policy ] || return 1
		echo "$policy" >$HK/policy 2>/dev/null || return 1
		[ "$(policy_now)" = "$policy" ] || return 1 ;;
	*) echo "promotion.sh: unknown policy $policy" >&2; exit 2 ;;
	esac
}

# The sampler: every second, per instance, which 2 MB regions of its mapping
# are huge (/proc/PID/pagemap + /proc/kpageflags: the region's first page is
# the head of a THP), AnonHugePages and Rss, /proc/PID/hawkeye; system-wide
# THP/compaction/HawkEye counters; and the workloads' own lines, as JSON.
cat >"$tmp/sampler.py" <<'EOF'
import json, os, re, signal, sys, time
out, run, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
insts = [dict(zip(("inst", "pid", "log", "workload"), a.split(":"))) for a in sys.argv[4:]]
VMSTAT = re.compile(r"^(thp_(fault_alloc|fault_fallback|collapse_alloc|collapse_alloc_failed|"
                    r"split_page|deferred_split_page)|compact_(stall|fail|success|daemon_wake)|"
                    r"pgmigrate_success|nr_anon_transparent_hugepages)$|^hawkeye_promote")
HP, KPF_THP, KPF_HEAD = 2 << 20, 22, 15
STATS = "/sys/kernel/mm/hawkeye/stats/"
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
f = open(out, "a")
def emit(obj):
    f.write(json.dumps(obj) + "\n")
    f.flush()
def kv(words):
    d = {}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            try:
                d[k] = int(v, 0) if v.startswith("0x") or v.isdigit() else float(v)
            except ValueError:
                d[k] = v
    return d
for i in insts:
    i.update(inst=int(i["inst"]), pid=int(i["pid"]), off=0, info={}, pm=None)
def read_log(i):
    try:
        with open(i["log"], "rb") as lf:
            lf.seek(i["off"])
            data = lf.read()
    except OSError:
        return
    end = data.rfind(b"\n") + 1
    i["off"] += end
    for line in data[:end].decode(errors="replace").splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "progress":
            d = kv(w[1:])
            unit = [k for k in d if k not in ("t", "mono", "total", "bfs")]
            emit({"type": "progress", "run": run, "inst": i["inst"], "t": d.get("t"),
                  "mono": d.get("mono"), "work": d.get(unit[0]) if unit else None,
                  "total": d.get("total"), "unit": unit[0] if unit else None})
        elif len(w) > 1 and w[1] in ("map", "hot", "init", "start", "done"):
            i["info"][w[1]] = kv(w[2:])
def huge_map(i):
    m, h = i["info"].get("map"), i["info"].get("hot")
    if not m or not h:
        return None
    try:
        if i["pm"] is None:
            i["pm"] = os.open(f"/proc/{i['pid']}/pagemap", os.O_RDONLY)
        s = []
        for va in range(m["start"], m["end"], HP):
            e = int.from_bytes(os.pread(i["pm"], 8, (va >> 12) * 8), "little")
            if not e >> 63 & 1:
                s.append("-")
                continue
            pfn = e & ((1 << 55) - 1)
            fl = int.from_bytes(os.pread(kpf, 8, pfn * 8), "little")
            s.append("H" if fl >> KPF_THP & 1 and fl >> KPF_HEAD & 1 and pfn % 512 == 0 else "4")
        return "".join(s)
    except OSError:
        return None
def keyed(path, sep=None):
    d = {}
    try:
        with open(path) as pf:
            for line in pf:
                w = line.replace(":", " ").split() if sep else line.split()
                if len(w) >= 2 and w[1].lstrip("-").isdigit():
                    d[w[0]] = int(w[1])
                elif len(w) >= 2 and re.fullmatch(r"[0-9.]+%", w[1]):   # 61.25% -> 6125
                    d[w[0]] = round(float(w[1][:-1]) * 100)
    except OSError:
        return None
    return d
kpf = os.open("/proc/kpageflags", os.O_RDONLY)
KH = "/sys/kernel/mm/transparent_hugepage/khugepaged/"
nxt = time.monotonic()
while True:
    last = stop
    for i in insts:
        read_log(i)
    mono = time.monotonic()
    sample = {"type": "sample", "run": run, "mono": round(mono, 3),
              "vmstat": {k: v for k, v in (keyed("/proc/vmstat") or {}).items()
                         if VMSTAT.match(k)},
              "khugepaged": {}, "inst": []}
    # HawkEye's own promote_* counters are files of stats/, kept under
    # their /proc/vmstat-style names (hawkeye_promote_success is in both).
    for k in sorted(os.listdir(STATS)) if os.path.isdir(STATS) else ():
        if k.startswith("promote_"):
            try:
                sample["vmstat"]["hawkeye_" + k] = int(open(STATS + k).read())
            except (OSError, ValueError):
                pass
    for k in ("full_scans", "pages_collapsed"):
        try:
            sample["khugepaged"][k] = int(open(KH + k).read())
        except OSError:
            pass
    for i in insts:
        try:
            with open(f"/proc/{i['pid']}/stat") as sf:
                if sf.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        hm = huge_map(i)
        if hm is None:
            continue
        roll = keyed(f"/proc/{i['pid']}/smaps_rollup", sep=True) or {}
        h, m = i["info"]["hot"], i["info"]["map"]
        first_hot = (h["start"] - m["start"]) // HP
        d = {"inst": i["inst"], "huge_map": hm, "huge": hm.count("H"),
             "hot_huge": hm[first_hot:].count("H"), "hot_regions": len(hm) - first_hot,
             "anon_huge_kb": roll.get("AnonHugePages"), "rss_kb": roll.get("Rss")}
        hk = keyed(f"/proc/{i['pid']}/hawkeye")
        if hk is not None:
            d["hawkeye"] = hk
        sample["inst"].append(d)
    emit(sample)
    if last:
        break
    nxt += interval
    if nxt < time.monotonic():   # late (the guest was busy): no burst of samples
        nxt = time.monotonic() + interval
    while not stop and time.monotonic() < nxt:
        time.sleep(min(0.05, max(0.0, nxt - time.monotonic())))
for i in insts:
    info = i["info"]
    start, done = info.get("start", {}), info.get("done", {})
    unit = [k for k in done if k not in ("seconds", "bfs", "checksum") and not k.endswith("_per_s")]
    emit({"type": "instance", "run": run, "inst": i["inst"], "workload": i["workload"],
          "pid": i["pid"], "map_start": info.get("map", {}).get("start"),
          "map_end": info.get("map", {}).get("end"), "hot_start": info.get("hot", {}).get("start"),
          "regions": info.get("map", {}).get("regions"),
          "hot_regions": info.get("hot", {}).get("regions"),
          "hot": {k: v for k, v in info.get("hot", {}).items() if k not in ("start", "end")},
          "init_seconds": info.get("init", {}).get("seconds"), "start_mono": start.get("mono"),
          "seconds": done.get("seconds"), "unit": unit[0] if unit else None,
          "work": done.get(unit[0]) if unit else None})
EOF

# Waits until FILE exists and matches PATTERN (grep -E), for at most SECONDS.
wait_for() {
	local file=$1 pattern=$2 seconds=$3 n=0
	until [ -e "$file" ] && grep -Eq "$pattern" "$file"; do
		n=$((n + 1))
		if [ $n -gt $((seconds * 5)) ]; then
			echo "promotion.sh: timed out waiting for '$pattern' in $file" >&2
			return 1
		fi
		sleep 0.2
	done
}

# hawkeye-pmu's MMU overheads for instances PIDS (of WORKLOADS, in order),
# before they start: hawkeye-pmud --once -n tells whether this machine has
# a PMU. If it has, sets pmu_source=hawkeye-pmud (the caller starts the
# daemon with the workloads); if not (exit status 3, or no daemon), writes
# the synthetic overheads (PMU_SEQUENTIAL for "sequential", PMU_RANDOM for
# the others), made to last the run, and sets pmu_source=synthetic. An
# "overhead" line either way.
pmu_overheads() {
	local run=$1 pids=($2) ws=($3) rc=none i v sep='' insts=''
	pmu_source=synthetic
	if [ -x "$PMUD" ]; then
		rc=0
		"$PMUD" ${PMUD_ARGS:-} --once -n -w 1 -p 2 >/dev/null 2>"$tmp/pmud.err" || rc=$?
	fi
	if [ "$rc" = 0 ]; then
		pmu_source=hawkeye-pmud
		[[ " ${PMUD_ARGS:-} " != *" --model "* ]] || pmu_source=modeled
	else
		echo 3600000 >$HK/pmu_ttl_ms
	fi
	for i in "${!pids[@]}"; do
		v=null
		if [ $pmu_source = synthetic ]; then
			v=$PMU_RANDOM
			[ "${ws[$i]}" = sequential ] && v=$PMU_SEQUENTIAL
			echo "${pids[$i]} $v" >$HK/measured_overhead ||
				{ echo "promotion.sh: cannot set pid ${pids[$i]}'s overhead" >&2; v=null; }
		fi
		insts+="$sep{\"inst\": $i, \"workload\": \"${ws[$i]}\", \"pid\": ${pids[$i]}, \"overhead_bp\": $v}"
		sep=", "
	done
	printf '{"type": "overhead", "run": %d, "source": "%s", "pmud_status": %s, "pmud_message": "%s", "inst": [%s]}\n' \
		"$run" $pmu_source "$([ $rc = none ] && echo null || echo $rc)" \
		"$(head -c 300 "$tmp/pmud.err" 2>/dev/null | tr -d '"\\' | tr '\n\t' '  ')" "$insts" >>"$out"
	echo "promotion.sh:   MMU overheads: $pmu_source (hawkeye-pmud exit status $rc)" >&2
}

# The order experiment's companion: a Redis server filled with REDIS_MB of
# 1 KB values (about 1.2 KB each with Redis's own structures), with a
# once-a-second sample of its memory (redisbloat watch).
REDIS_SOCK=/tmp/promotion-redis.sock
redis_keys() { echo $((REDIS_MB * 850)); }
redis_start() {
	redis_server $REDIS_SOCK "$tmp/redis.log"
	bg_pids+=("$redis_pid")
	"$bindir/redisbloat" watch "$redis_pid" redis /dev/null >"$tmp/redis-watch.out" &
	bg_pids+=($!)
	"$bindir/redisbloat" -s $REDIS_SOCK fill r "$(redis_keys)" 1000 >"$tmp/redis-fill.out"
}

run_id=0 round=1
order=''	# the order experiment: redis-first or workload-first
# run EXPERIMENT WORKLOAD POLICY INSTANCES MB [WORKLOAD ARGS...]: one run,
# fragmented start; appends its lines to $out. Returns 1 if the policy is
# unavailable. WORKLOAD may be a list "a+b": instance i runs the i-th (the
# last one for the rest).
run() {
	local exp=$1 w=$2 policy=$3 n=$4 mb=$5 i fpid spid hot=$HOT ws wi dpid='' pmu_source=''
	local frag_mb=$(($5 * $4 + 64)) cpid='' redis_pid=''
	shift 5
	IFS=+ read -ra ws <<<"$w"
	[ "$exp" = pmu ] && hot=1.0
	run_id=$((run_id + 1))
	if ! setup_policy "$policy"; then
		printf '{"type": "unavailable", "run": %d, "experiment": "%s", "workload": "%s", "policy": "%s"}\n' \
			$run_id "$exp" "$w" "$policy" >>"$out"
		echo "promotion.sh: policy $policy unavailable on this kernel: skipped" >&2
		return 1
	fi
	if [ "$exp" = order ]; then
		[ "$policy" = none ] || echo always >$THP/enabled
		frag_mb=$((frag_mb + REDIS_MB * 3 / 2))
	fi
	echo "promotion.sh: [$run_id] $exp $w x$n, policy $policy, ${mb} MB${order:+, $order}, args: $*" >&2
	printf '{"type": "run", "run": %d, "experiment": "%s", "workload": "%s", "policy": "%s", "round": %d, "instances": %d, "mb": %d, "hot_fraction": %s, "args": "%s", "order": "%s", "redis_mb": %d, "redis_rate": %d, "budget": {"pages_to_scan": %d, "scan_sleep_ms": %d, "batch": %d, "sleep_ms": %d, "scan_period_ms": %d, "sample_window_ms": %d}, "knobs": {%s}}\n' \
		$run_id "$exp" "$w" "$policy" "$round" "$n" "$mb" "$hot" "$*" "$order" "$REDIS_MB" "$REDIS_RATE" \
		"$PAGES_TO_SCAN" "$SCAN_SLEEP_MS" \
		$((PAGES_TO_SCAN / 512)) "$SCAN_SLEEP_MS" "$SCAN_PERIOD_MS" "$SAMPLE_WINDOW_MS" \
		"$(knobs_json)" >>"$out"
	sync
	echo 3 >$VM/drop_caches
	echo 1 >$VM/compact_memory
	rm -f "$tmp"/*.out "$tmp/frag.pid" "$tmp/pmud.err"
	# Fragmented free memory: what the workloads need and 64 MB more.
	"$bindir/fragment" -l "$LEAVE_MB" -f $frag_mb -p "$tmp/frag.pid" >"$tmp/frag.out" &
	fpid=$!
	bg_pids=("$fpid")
	wait_for "$tmp/frag.pid" . 300
	cpu_watch_start
	[ "$order" = redis-first ] && redis_start
	local pids=() specs=()
	for ((i = 0; i < n; i++)); do
		wi=${ws[$((i < ${#ws[@]} ? i : ${#ws[@]} - 1))]}
		"$bindir/$wi" -m "$mb" -f "$hot" -w -s $((42 + i)) -l "$wi-$i" "$@" >"$tmp/$wi-$i.out" &
		pids+=($!)
		specs+=("$i:$!:$tmp/$wi-$i.out:$wi")
	done
	bg_pids+=("${pids[@]}")
	"$PY" "$tmp/sampler.py" "$out" $run_id 1 "${specs[@]}" &
	spid=$!
	bg_pids+=("$spid")
	for ((i = 0; i < n; i++)); do
		wait_for "$tmp/${specs[$i]##*:}-$i.out" ' ready ' 600
	done
	[ "$order" = workload-first ] && redis_start
	# The sampler is running (Python can take long to start in a busy
	# guest): the samples cover t = 0.
	wait_for "$out" "\"type\": \"sample\", \"run\": $run_id," 300 || true
	if [ "$policy" = hawkeye-pmu ]; then
		pmu_overheads $run_id "${pids[*]}" "$(for s in "${specs[@]}"; do printf '%s ' "${s##*:}"; done)"
	fi
	kill -TERM "$fpid"
	wait "$fpid"
	kill -USR1 "${pids[@]}"
	if [ -n "$order" ]; then	# the light load, for as long as the workload runs
		"$bindir/redisbloat" -s $REDIS_SOCK get r "$(redis_keys)" 0 1 "$ORDER_SECONDS" \
			"$REDIS_RATE" >"$tmp/redis-get.out" &
		cpid=$!
		bg_pids+=("$cpid")
	fi
	if [ "$pmu_source" = hawkeye-pmud ] || [ "$pmu_source" = modeled ]; then
		# The daemon measures while they run.
		"$PMUD" ${PMUD_ARGS:-} -p 5 -w 1 2>>"$tmp/pmud.err" &
		dpid=$!
		bg_pids+=("$dpid")
	fi
	for i in "${pids[@]}"; do
		wait "$i" || echo "promotion.sh: a $w instance failed (exit $?)" >&2
	done
	if [ -n "$dpid" ]; then
		# Still running, or what it exited with: the report says which.
		rc=0
		kill -TERM "$dpid" 2>/dev/null || { wait "$dpid" || rc=$?; }
		wait "$dpid" 2>/dev/null || true
		printf '{"type": "pmud_exit", "run": %d, "status": %d}\n' "$run_id" "$rc" >>"$out"
	fi
	kill -TERM "$spid"
	wait "$spid"
	if [ -n "$order" ]; then
		wait "$cpid" || echo "promotion.sh: the Redis client failed" >&2
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
		sed "s/^{\"type\": \"sample\", /{\"type\": \"companion\", \"run\": $run_id, /" \
			"$tmp/redis-watch.out" >>"$out"
		sed "s/^{/{\"type\": \"companion_op\", \"run\": $run_id, /" "$tmp/redis-fill.out" "$tmp/redis-get.out" >>"$out"
	fi
	cpu_watch_stop "$exp" "$policy${order:+ $order}" | sed "s/^{/{\"run\": $run_id, /" >>"$out"
	bg_pids=()
	sed "s/^{/{\"run\": $run_id, /" "$tmp/frag.out" >>"$out"
	grep -h ' done ' "$tmp"/*.out | sed 's/^/promotion.sh:   /' >&2
	grep -h '"fragment"' "$tmp/frag.out" | sed 's/^/promotion.sh:   /' | cut -c1-220 >&2
}

# Lookups (edges) per second of the last baseline run of WORKLOAD, from its
# instance line; empty if none ran.
base_rate() {
	"$PY" - "$out" "$1" <<'EOF'
import json, sys
runs, rate = {}, ""
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("type") == "run":
        runs[o["run"]] = o
    elif o.get("type") == "instance" and o.get("seconds"):
        r = runs.get(o["run"], {})
        if r.get("policy") == "none" and r.get("experiment") == "single" and r.get("workload") == sys.argv[2]:
            rate = o["work"] / o["seconds"]
print(int(rate) if rate else "")
EOF
}

mkdir -p "$(dirname "$out")"
: >"$out"
printf '{"type": "env", %s, "mem_total_kb": %s, "cpus": %s, "quick": "%s", "hawkeye_promote": %s, "mb": %s, "fair_mb": %s, "hot_fraction": %s, "duration": %s, "rounds": %s, "fair_seconds": %s, "leave_mb": %s}\n' \
	"$(env_json)" "$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)" "$(nproc)" "${QUICK:-}" \
	"$([ -e $HK/policy ] && echo true || echo false)" "$MB" "$FAIR_MB" "$HOT" "$DURATION" "$ROUNDS" \
	"$FAIR_SECONDS" "$LEAVE_MB" >>"$out"

# Interleaved rounds: a slow stretch of the host lands on every policy
# alike, and round i of one policy pairs with round i of another.
if [[ " $experiments " == *" single "* ]]; then
	for round in $(seq "$ROUNDS"); do
		for w in $workloads; do
			pols=POLICIES_$w
			for p in ${!pols:-$policies}; do
				run single "$w" "$p" 1 "$MB" -d "$DURATION" || true
			done
		done
	done
	round=1
fi
if [[ " $experiments " == *" fairness "* ]]; then
	for round in $(seq "$ROUNDS_fairness"); do
		for w in $fair_workloads; do
			rate=$(base_rate "$w")
			for p in $policies; do
				# The baseline of three instances is skipped under QUICK.
				[ "$p" = none ] && [ -n "${QUICK:-}" ] && continue
				if [ -n "$rate" ]; then
					# Same work for each instance; a time limit as a safety net.
					run fairness "$w" "$p" 3 "$FAIR_MB" -n $((rate * FAIR_SECONDS)) \
						-d $((FAIR_SECONDS * 5)) || true
				else
					run fairness "$w" "$p" 3 "$FAIR_MB" -d "$FAIR_SECONDS" || true
				fi
			done
		done
	done
	round=1
fi
if [[ " $experiments " == *" order "* ]]; then
	for round in $(seq "$ROUNDS_order"); do
		for p in $ORDER_POLICIES; do
			for order in workload-first redis-first; do
				# Without huge pages the order does not matter: one baseline run.
				[ "$p" = none ] && [ $order = redis-first ] && continue
				run order xsbench "$p" 1 "$ORDER_MB" -d "$ORDER_SECONDS" || true
			done
		done
	done
	order='' round=1
fi
if [[ " $experiments " == *" pmu "* ]]; then
	for round in $(seq "$ROUNDS_pmu"); do
		for p in $PMU_POLICIES; do
			run pmu xsbench+sequential "$p" 2 "$PMU_MB" -d "$PMU_SECONDS" || true
		done
	done
	round=1
fi
echo "promotion.sh: wrote $out" >&2
