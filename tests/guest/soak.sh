#!/bin/sh
# Runs inside the guest: Debian's stress-ng mm stressors, with --verify,
# for SECONDS under every HawkEye mechanism at once: pre-zeroing unlimited,
# bloat recovery always active, the promotion policy switched every
# POLICY_S seconds through all five, khugepaged sped up.
#   soak.sh [--kmemleak] [SECONDS] [POLICY_S]
# Prints one TAP line per stressor (ok: it ran and stress-ng reported no
# failure) and HawkEye's counters at the end. Kernel reports are vm-run's
# to find in the console. --kmemleak (make soak) ends with a kmemleak scan;
# in make test, run-in-guest.sh scans once after every test.
set -u
here=$(cd "$(dirname "$0")" && pwd)
leaks=0
[ "${1:-}" = --kmemleak ] && { leaks=1; shift; }
# stress-ng writes scratch files: to the guest's private /tmp.
cd /tmp || exit 1
secs=${1:-180}
policy_s=${2:-5}
mm=/sys/kernel/mm
hk=$mm/hawkeye

command -v stress-ng >/dev/null || { echo "stress-ng is missing: run scripts/setup-host"; exit 1; }

echo always >$mm/transparent_hugepage/enabled
echo 100 >$mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
echo 100 >$mm/transparent_hugepage/khugepaged/alloc_sleep_millisecs
echo 4096 >$mm/transparent_hugepage/khugepaged/pages_to_scan
echo 0 >$hk/prezero/rate
echo 1 >$hk/prezero/enabled
# Memory in use is always above 2 %: recovery never stops.
echo 1 >$hk/debloat/low_pct
echo 2 >$hk/debloat/high_pct
echo 1 >$hk/debloat/enabled

# A task blocked (D) at three looks 20 s apart: every task's stack to the
# console (sysrq t), at most every five minutes (a busy guest has false
# alarms). The hung task report at two minutes shows only the blocked
# tasks, not the running one that holds what they wait for.
(
	d1= d2=
	while sleep 20; do
		d=$(sed -n 's/^\([0-9]*\) (.*) D .*/\1/p' /proc/[0-9]*/stat 2>/dev/null)
		for pid in $d; do
			case " $d1 " in *" $pid "*) ;; *) continue ;; esac
			case " $d2 " in *" $pid "*) ;; *) continue ;; esac
			echo "soak: task $pid in D state at three looks 20 s apart: sysrq t" >/dev/kmsg
			lvl=$(cut -f1 /proc/sys/kernel/printk)
			echo 8 >/proc/sys/kernel/printk
			echo t >/proc/sysrq-trigger
			echo "$lvl" >/proc/sys/kernel/printk
			sleep 280
			d=
			break
		done
		d2=$d1 d1=$(echo $d)
	done
) &
watcher=$!

# Every policy the kernel offers (the baselines only where they are built).
policies=$(tr -d '[]' <$hk/promote/policy)
(
	while :; do
		for p in $policies; do
			echo "$p" >$hk/promote/policy || echo "soak: policy $p refused"
			sleep "$policy_s"
		done
	done
) &
switcher=$!

# Every 30 s each stress-ng process's state, CPU ticks and wait channel: a
# stressor that stops progressing without staying in D shows where it
# waits (in CI once: vm, mmap and mremap got 0.3-0.45 s of CPU in
# 120 s, against about 20 s each in a soak of their own).
(
	while sleep 30; do
		for d in /proc/[0-9]*; do
			read -r comm <"$d/comm" 2>/dev/null || continue
			case $comm in stress-ng*) ;; *) continue ;; esac
			# Fields 3, 14, 15: state, utime, stime (comm has no spaces).
			s=$(cut -d' ' -f3,14,15 "$d/stat" 2>/dev/null) || continue
			echo "soak: progress ${d#/proc/} $comm $s $(cat "$d/wchan" 2>/dev/null)"
		done
	done
) &
progress=$!

stressors="vm mmap madvise mremap fork brk memfd userfaultfd"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -gt 1 ] && stressors="$stressors numa"
args=
for s in $stressors; do
	args="$args --$s 1"
done
# Sizes small enough for every stressor to finish operations on the debug
# kernel under TCG; the data limit keeps brk, which grows until it fails,
# from calling the OOM killer.
log=/tmp/soak-stress-ng.log
start=$(date +%s)
# shellcheck disable=SC2086
(ulimit -d 524288 && exec stress-ng $args --vm-bytes 64M --mmap-bytes 2M \
	--mremap-bytes 16M --memfd-bytes 8M --userfaultfd-bytes 16M \
	--verify --timeout "${secs}s" --metrics-brief) >$log 2>&1
rc=$?
kill $switcher $watcher $progress
wait $switcher $watcher $progress 2>/dev/null
cat $log

echo "soak: $(($(date +%s) - start)) s, stress-ng status $rc, $nodes NUMA node(s)," \
	"policy switched every $policy_s s"
pass=0
fail=0
for s in $stressors; do
	ops=$(sed -n "s/^stress-ng: metrc: \[[0-9]*\] $s  *\([0-9][0-9]*\) .*/\1/p" $log)
	if [ "${ops:-0}" -gt 0 ] && ! grep -q "fail: .*\b$s\b" $log; then
		echo "ok $s ($ops bogo ops)"
		pass=$((pass + 1))
	else
		echo "not ok $s (bogo ops: ${ops:-none})"
		fail=$((fail + 1))
	fi
done
if [ "$rc" -ne 0 ]; then
	echo "not ok stress-ng exited with status $rc"
	fail=$((fail + 1))
fi
if [ $leaks = 1 ]; then
	"$here/kmemleak.sh"
	case $? in
	0) echo "ok kmemleak: no leaks"; pass=$((pass + 1)) ;;
	4) ;;
	*) echo "not ok kmemleak reported leaks"; fail=$((fail + 1)) ;;
	esac
fi
echo "soak: HawkEye's counters:"
grep -E '^(hawkeye_|nr_free_zeroed|thp_fault_alloc|thp_collapse_alloc |thp_split_page )' /proc/vmstat
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
