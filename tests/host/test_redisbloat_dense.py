"""bench/redisbloat dense: of a process's anonymous memory, the 64 KB
pieces that present base pages map whole, none the zero page. A helper
writes one half of an aligned 8 MiB mapping and only reads the other (the
zero page maps it); the figure drops by exactly the written half when
the mapping goes."""
import json
import os
import subprocess

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
HELPER = r"""
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
int main(void)
{
	size_t len = 8 << 20, i;
	char *m = mmap(NULL, len + (64 << 10), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)m + 0xffff) & ~(uintptr_t)0xffff);
	volatile char sum = 0;

	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len / 2; i += 4096)
		p[i] = 1;
	for (; i < len; i += 4096)
		sum += p[i];
	puts("mapped");
	fflush(stdout);
	getchar();
	munmap(m, len + (64 << 10));
	puts("unmapped");
	fflush(stdout);
	getchar();
	return sum;
}
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="PFNs and /proc/kpageflags need root")
def test_dense_counts_written_base_pages_only(tmp_path):
    rb, helper = str(tmp_path / "redisbloat"), str(tmp_path / "helper")
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", rb,
                    os.path.join(BENCH, "redisbloat.c"), "-lm"], check=True)
    (tmp_path / "helper.c").write_text(HELPER)
    subprocess.run(["cc", "-O2", "-o", helper, str(tmp_path / "helper.c")], check=True)
    p = subprocess.Popen([helper], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def dense():
        r = subprocess.run([rb, "dense", str(p.pid)], capture_output=True, text=True,
                           check=True, timeout=120)
        return json.loads(r.stdout)
    try:
        assert p.stdout.readline() == "mapped\n"
        mapped = dense()
        p.stdin.write("\n")
        p.stdin.flush()
        assert p.stdout.readline() == "unmapped\n"
        unmapped = dense()
    finally:
        p.kill()
        p.wait()
    assert mapped["dense_base_kb"] - unmapped["dense_base_kb"] == 4096
    assert mapped["large_kb"] == unmapped["large_kb"]


def test_dense_of_no_process_fails(tmp_path):
    rb = str(tmp_path / "redisbloat")
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", rb,
                    os.path.join(BENCH, "redisbloat.c"), "-lm"], check=True)
    r = subprocess.run([rb, "dense", "0"], capture_output=True, text=True)
    assert r.returncode == 1 and not r.stdout
