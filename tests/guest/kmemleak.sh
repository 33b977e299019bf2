#!/bin/sh
# Runs inside the guest: asks kmemleak (debug kernel) to scan and prints
# what it reports; fails if anything leaked. Exit 4 (skip) without
# kmemleak.
#
# kmemleak reports objects unreferenced for 5 s or more, so it waits that
# long first; the second scan catches objects the first found too young.
# A scan can also report an object whose only pointer was, at that
# moment, somewhere it does not look (a false positive, referenced again
# or freed by the next scan): the file then lists it no longer. A leak
# stays unreferenced, so a report confirms itself: whatever is still
# listed after one more scan fails; what was not is printed, as a
# transient. verbose puts each suspect's allocation stack in the console
# too (the console line "N new suspected memory leaks" alone names none).
leaks=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
[ -w $leaks ] || exit 4
echo 1 >/sys/module/kmemleak/parameters/verbose 2>/dev/null
sleep 6
echo scan >$leaks && echo scan >$leaks || exit 1
first=$(cat $leaks)
[ -z "$first" ] && exit 0
echo scan >$leaks || exit 1
report=$(cat $leaks)
if [ -z "$report" ]; then
	echo "kmemleak: transient: reported by one scan, referenced or freed by the next:"
	printf '%s\n' "$first"
	exit 0
fi
printf '%s\n' "$report"
exit 1
