"""bench/redisbloat dense: of a process's anonymous memory, the 64 KB
pieces that present base pages map whole, none the zero page, and the
pieces large folios map. A helper maps, in 64 KB-aligned mappings:
8 MiB of base pages, its first half written (the zero page maps the other
half, read only), with one page dropped in each of its first 8 pieces;
a written private file mapping; and, where the host has THP, a written
MADV_HUGEPAGE 2 MiB. The figures fall by exactly their part when the
mappings go."""
import json
import os
import subprocess

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
HELPER = r"""
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define MB (1UL << 20)
static char *map_aligned(size_t len, size_t align, int fd)
{
	char *m = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
		       fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_PRIVATE, fd, 0);
	char *p = (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));

	if (fd >= 0) {	/* the file from the aligned address */
		munmap(m, len + align);
		p = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
	}
	return p;
}
int main(int argc, char **argv)
{
	size_t len = 8 * MB, i;
	char *p = map_aligned(len, 64 << 10, -1), *f, *h;
	int fd = open(argv[1], O_RDWR);
	volatile char sum = 0;

	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len / 2; i += 4096)
		p[i] = 1;
	for (; i < len; i += 4096)
		sum += p[i];
	for (i = 0; i < 8; i++)
		madvise(p + i * (64 << 10) + 4096 * i, 4096, MADV_DONTNEED);
	f = map_aligned(MB, 64 << 10, fd);
	memset(f, 1, MB);
	h = map_aligned(2 * MB, 2 * MB, -1);
	madvise(h, 2 * MB, MADV_HUGEPAGE);
	memset(h, 1, 2 * MB);
	puts("mapped");
	fflush(stdout);
	getchar();
	munmap(p, len);
	munmap(f, MB);
	munmap(h, 2 * MB);
	puts("unmapped");
	fflush(stdout);
	getchar();
	return sum;
}
"""


def build(tmp_path):
    rb = str(tmp_path / "redisbloat")
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", rb,
                    os.path.join(BENCH, "redisbloat.c"), "-lm"], check=True)
    return rb


def anon_huge_kb(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("AnonHugePages:"))


@pytest.mark.skipif(os.geteuid() != 0, reason="PFNs and /proc/kpageflags need root")
def test_dense_counts_whole_written_base_page_pieces(tmp_path):
    rb, helper = build(tmp_path), str(tmp_path / "helper")
    (tmp_path / "helper.c").write_text(HELPER)
    (tmp_path / "file").write_bytes(b"\0" * (1 << 20))
    subprocess.run(["cc", "-O2", "-o", helper, str(tmp_path / "helper.c")], check=True)
    p = subprocess.Popen([helper, str(tmp_path / "file")], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)

    def dense():
        r = subprocess.run([rb, "dense", str(p.pid)], capture_output=True, text=True,
                           check=True, timeout=120)
        return json.loads(r.stdout)
    try:
        assert p.stdout.readline() == "mapped\n"
        mapped, huge = dense(), anon_huge_kb(p.pid)
        p.stdin.write("\n")
        p.stdin.flush()
        assert p.stdout.readline() == "unmapped\n"
        unmapped = dense()
    finally:
        p.kill()
        p.wait()
    # 4 MiB written, less the 8 pieces with a page dropped; not the zero
    # page's half, not the file.
    assert mapped["dense_base_kb"] - unmapped["dense_base_kb"] == 4096 - 8 * 64
    # The THP, where the host gave one, counts as large and not as dense.
    assert mapped["large_kb"] - unmapped["large_kb"] == (2048 if huge >= 2048 else 0)


def test_dense_of_no_process_fails(tmp_path):
    r = subprocess.run([build(tmp_path), "dense", "0"], capture_output=True, text=True)
    assert r.returncode == 1 and not r.stdout
