"""tools/tlbmodel/model.c on synthetic page tables (modeltest.c): access
streams whose TLB misses, walks and page-table loads follow from the
Golden Cove sizes (L1 DTLB 4 KB: 16 sets of 6; STLB: 128 sets of 16; PDE
cache 32 entries, PDPTE cache 4) and LRU replacement."""
import json
import os
import subprocess

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "tlbmodel")


@pytest.fixture(scope="module")
def modeltest(tmp_path_factory):
    exe = str(tmp_path_factory.mktemp("tlbmodel") / "modeltest")
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", exe,
                    os.path.join(SRC, "modeltest.c"), os.path.join(SRC, "model.c")], check=True)

    def run(*args):
        out = subprocess.run([exe, *map(str, args)], check=True, capture_output=True,
                             text=True, timeout=60).stdout
        return json.loads(out)
    return run


def test_pages_within_the_l1_miss_once(modeltest):
    # 64 pages, 4 per set of the 6-way L1: only the first touches miss.
    s = modeltest("4k", 64, 3)
    assert s["accesses"] == 192 and s["l1_misses"] == 64 and s["walks"] == 64
    # The first walk loads all four levels; the PDE cache spares the rest
    # all but the PTE.
    assert s["loads"] == 4 + 63 and s["pwc_hits"] == 63


def test_pages_within_the_stlb_walk_once(modeltest):
    # 1024 pages: more than the L1 holds (LRU over a cycle misses every
    # time), fewer than the STLB: the later rounds hit there.
    s = modeltest("4k", 1024, 3)
    assert s["l1_misses"] == 3 * 1024 and s["walks"] == 1024 and s["stlb_hits"] == 2 * 1024
    assert s["stlb_cycles"] == 2 * 1024 * 8


def test_more_pages_than_the_stlb_walk_every_time(modeltest):
    s = modeltest("4k", 4096, 3)
    assert s["walks"] == s["accesses"] == 3 * 4096 and s["walks_4k"] == s["walks"]
    # Round 1: 4 loads, then 1 per page, 2 at each of the 7 other 2 MB
    # regions (the PDPTE cache names their page directory); after it the
    # 8 PDEs stay cached.
    assert s["loads"] == 4 + 511 + 7 * (2 + 511) + 2 * 4096


def test_huge_pages_walk_once_per_2mb(modeltest):
    s = modeltest("2m", 4096, 3)
    assert s["walks"] == s["walks_2m"] == 8 and s["walks_4k"] == 0
    assert s["l1_misses"] == 8 and s["loads"] == 3 + 7


def test_set_conflicts_and_the_pde_cache(modeltest):
    # One page in each of 40 2 MB regions: all in set 0 of the L1 and of the
    # STLB (16 ways), so every access walks; 40 PDEs overflow the 32-entry
    # PDE cache (LRU over a cycle: every walk misses it), the PDPTE cache
    # still names the page directory: 2 loads a walk.
    s = modeltest("4k", 40 * 512, 3, 512)
    assert s["walks"] == 120
    assert s["loads"] == 4 + 39 * 2 + 2 * 40 * 2
    # 20 regions: the PDE cache holds them after the first round.
    s = modeltest("4k", 20 * 512, 3, 512)
    assert s["walks"] == 60 and s["loads"] == 4 + 19 * 2 + 2 * 20


def test_walk_cycles_are_the_loads_latencies(modeltest):
    # 8 huge pages: the first walk loads a PML4E, a PDPTE and a PDE, each
    # line's first load from DRAM (250 cycles); the 7 others load a PDE
    # from that same line, now in L1D (5 cycles).
    s = modeltest("2m", 4096, 1)
    assert s["walk_cycles"] == 3 * 250 + 7 * 5


def test_a_flush_empties_the_tlbs_and_the_paging_structure_caches(modeltest):
    s = modeltest("4k", 64, 3, 1, "flush")
    assert s["walks"] == 3 * 64 and s["loads"] == 3 * (4 + 63)


def test_invlpg_after_a_collapse_finds_the_2mb_page(modeltest):
    # 1024 pages (two 2 MB regions) remapped by 2 MB pages after every
    # round, all 4 KB pages INVLPG'd: each later round walks twice, to 2 MB.
    s = modeltest("4k", 1024, 3, 1, "remap")
    assert s["walks_4k"] == 1024 and s["walks_2m"] == 2 * 2
    # Without the INVLPGs the stale 4 KB entries keep hitting in the STLB.
    s = modeltest("4k", 1024, 3, 1, "stale")
    assert s["walks_2m"] == 0 and s["stlb_hits"] == 2 * 1024


def test_address_spaces_do_not_share_entries(modeltest):
    # Rounds alternate between two ASIDs: each walks its 64 pages once;
    # 128 translations overflow the 96-entry L1, not the STLB.
    s = modeltest("4k", 64, 4, 1, "asid")
    assert s["walks"] == 2 * 64 and s["stlb_hits"] == 2 * 64
    # A switch that flushes the PCID written (CR3 bit 63 clear, as Linux
    # writes it when a flush was deferred to the switch) walks every round.
    s = modeltest("4k", 64, 4, 1, "switch")
    assert s["walks"] == 4 * 64 and s["stlb_hits"] == 0


def test_without_pcids_switches_keep_what_the_tables_still_say(modeltest):
    # A guest without PCIDs (TCG) flushes at every switch; the modeled core
    # has PCIDs and keeps each address space's translations: the same
    # walks as switches that keep them.
    assert modeltest("4k", 64, 4, 1, "nopcid")["walks"] == 2 * 64
    # The first ASID's tables change to 2 MB pages while the second runs,
    # with no flush the model can see: back in the first ASID its 4 KB
    # entries no longer match the tables, and it walks again, to 2 MB.
    s = modeltest("4k", 1024, 4, 1, "nopcid-remap")
    assert s["walks_4k"] == 1024 and s["walks_2m"] == 2 * 2 and s["faults"] == 0


def test_data_traffic_evicts_the_walks_lines(modeltest):
    # The same walks, with the data accesses in the caches as well: the
    # PDE line the later walks load is no longer always in L1D.
    quiet, busy = modeltest("2m", 4096, 1), modeltest("2m", 4096, 1, 1, "data")
    assert busy["loads"] == quiet["loads"] == 10
    assert busy["walk_cycles"] > quiet["walk_cycles"]
