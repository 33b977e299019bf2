# hawkeye: the two commands are `make demo` and `make test`; see README.md.
.PHONY: demo test test-host kernel deb kernel-tree kernel-export checkpatch clean help

demo:
	scripts/setup-host
	bench/demo

test:
	python3 tests/run.py

test-host:
	scripts/setup-host && python3 tests/run.py --host-only

kernel:
	scripts/build-kernel --flavour debug
	scripts/build-kernel --flavour release

deb:
	scripts/build-deb

kernel-tree:
	scripts/kernel-tree

kernel-export:
	scripts/kernel-export

checkpatch:
	scripts/checkpatch

clean:
	rm -rf build/obj-debug build/obj-release build/tests build/bench

help:
	@sed -n 's/^\([a-z-]*\):.*/\1/p' Makefile
