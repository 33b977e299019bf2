#!/bin/sh
# Runs inside the guest: asks kmemleak (debug kernel) to scan and prints
# what it reports; fails if anything leaked. kmemleak reports objects
# unreferenced for 5 s or more, so it waits that long first; the second
# scan catches objects the first found too young. Exit 4 (skip) without
# kmemleak. Its console line ("N new suspected memory leaks") is also a
# kernel problem to vm-run.
leaks=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
[ -w $leaks ] || exit 4
sleep 6
echo scan >$leaks && echo scan >$leaks || exit 1
report=$(cat $leaks)
[ -z "$report" ] && exit 0
printf '%s\n' "$report"
exit 1
