// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU's translation caches as CPUID describes them, as one JSON
 * object: vendor, family, model, stepping and, per TLB, its kind (data,
 * instruction, unified, load, store), level, page sizes, ways, sets and
 * entries. Intel: leaf 0x18 (deterministic address translation
 * parameters); AMD: leaves 0x80000005/6 (and 0x80000019 for 1 GB pages).
 * bench/native_tlb.py records it beside its runs, to compare with the
 * sizes the TLB model (tools/tlbmodel/model.c) assumes. A hypervisor may
 * hide leaf 0x18: then the list is empty.
 */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>

static int ntlbs;

static void tlb(const char *kind, int level, const char *sizes, unsigned int ways,
		unsigned int sets, int full)
{
	printf("%s\n  {\"kind\": \"%s\", \"level\": %d, \"pages\": \"%s\", \"ways\": %u, "
	       "\"sets\": %u, \"entries\": %u, \"fully_associative\": %s}",
	       ntlbs++ ? "," : "", kind, level, sizes, ways, sets, ways * sets,
	       full ? "true" : "false");
}

static void intel(void)
{
	static const char *const kinds[] = { "null", "data", "instruction", "unified", "load", "store" };
	unsigned int a, b, c, d, max, i;

	if (__get_cpuid_max(0, NULL) < 0x18)
		return;
	__cpuid_count(0x18, 0, max, b, c, d);
	for (i = 0; i <= max; i++) {
		char sizes[32] = "";
		unsigned int type;

		__cpuid_count(0x18, i, a, b, c, d);
		type = d & 0x1f;
		if (!type || type >= sizeof(kinds) / sizeof(kinds[0]))
			continue;
		if (b & 1)
			strcat(sizes, "4K ");
		if (b & 2)
			strcat(sizes, "2M ");
		if (b & 4)
			strcat(sizes, "4M ");
		if (b & 8)
			strcat(sizes, "1G ");
		if (*sizes)
			sizes[strlen(sizes) - 1] = '\0';
		tlb(kinds[type], (d >> 5) & 7, sizes, b >> 16, c, (d >> 8) & 1);
	}
}

/* AMD's L2 associativity codes (leaf 0x80000006); 0xf: fully associative. */
static unsigned int amd_ways(unsigned int code)
{
	static const unsigned int ways[16] = { 0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0 };

	return ways[code & 15];
}

/* An AMD L1 TLB field: associativity in bits 31:24 (0xff: full), entries 23:16. */
static void amd_l1(const char *sizes, unsigned int r)
{
	unsigned int assoc = r >> 24, entries = (r >> 16) & 0xff;

	if (entries && assoc)
		tlb("data", 1, sizes, assoc == 0xff ? entries : assoc,
		    assoc == 0xff ? 1 : entries / assoc, assoc == 0xff);
}

/* An AMD L2 TLB field: associativity code in bits 31:28, entries 27:16. */
static void amd_l2(const char *sizes, unsigned int r)
{
	unsigned int code = r >> 28, entries = (r >> 16) & 0xfff;
	unsigned int ways = code == 0xf ? entries : amd_ways(code);

	if (entries && ways)
		tlb("data", 2, sizes, ways, entries / ways, code == 0xf);
}

static void amd(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0x80000000, NULL) < 0x80000006)
		return;
	__cpuid(0x80000005, a, b, c, d);
	amd_l1("2M 4M", a);
	amd_l1("4K", b);
	__cpuid(0x80000006, a, b, c, d);
	amd_l2("2M 4M", a);
	amd_l2("4K", b);
}

int main(void)
{
	unsigned int a, b, c, d, family, model;
	char vendor[13] = "";

	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	__cpuid(1, a, b, c, d);
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family >= 6)
		model |= ((a >> 16) & 0xf) << 4;
	printf("{\"vendor\": \"%s\", \"family\": %u, \"model\": %u, \"stepping\": %u, \"tlbs\": [",
	       vendor, family, model, a & 0xf);
	if (!strcmp(vendor, "GenuineIntel"))
		intel();
	else if (!strcmp(vendor, "AuthenticAMD"))
		amd();
	printf("\n]}\n");
	return 0;
}
