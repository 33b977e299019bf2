// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye with the cgroup v1 memory controller, as some distributions
 * still mount it: HawkEye's cgroup features are cgroup v2's, and a v1
 * charge goes exactly as upstream's. A group whose memory+swap limit is
 * full while its memory limit is not is OOM-killed (reclaim cannot swap,
 * the OOM killer runs) with bloat recovery on, as with it off.
 *
 * The memory controller can move to a v1 hierarchy only while no cgroup
 * of v2 uses it, dying ones included: this runs in a boot where nothing
 * else made memory cgroups, before the tests that do not use them.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define CG2ROOT "/sys/fs/cgroup/"
#define V1ROOT "/tmp/hawkeye-memcg-v1/"
#define V1_G V1ROOT "g/"

static const char *const knobs[] = { DEBLOAT "enabled", DEBLOAT "threshold" };
static const struct knob_set setup_knobs[] = {
	{ DEBLOAT "threshold", "256" }, { DEBLOAT "enabled", "1" },
};

/* A number in a v1 group's file, flat or after "KEY "; -1: none. */
static long v1_long(const char *file, const char *key)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), V1_G "%s", file);
	if (key)
		return keyed_value(path, key, ' ');
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* @mb of 4 KB pages, written; NULL if they could not be mapped. */
static char *written(long mb)
{
	size_t len = mb * MB, i;
	char *p = map_aligned(len);

	if (!p)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len; i += PAGE_SZ)
		p[i] = 1;
	return p;
}

/*
 * In the group, under its 64 MB memory limit: 64 MB written, then 56 MB
 * more, which pushes most of the first to swap, then the 56 MB unmapped:
 * little memory in use, much swap. Says 'r' on @ready, waits for a byte
 * on @go, then allocates until killed. Exit 4 only if it could not.
 */
static int swap_then_grow(int ready, int go)
{
	char *b, c;

	if (!written(64) || !(b = written(56)))
		return 4;
	munmap(b, 56 * MB);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 4;
	while (written(16))
		;
	return 4;
}

FIXTURE(cgroup_v1) {
	int unused;
};

FIXTURE_SETUP(cgroup_v1)
{
	if (access(DEBLOAT "enabled", F_OK))
		SKIP(return, "no HawkEye bloat recovery in this kernel");
	if (access("/proc/swaps", F_OK) || !meminfo_kb("SwapTotal"))
		SKIP(return, "no swap");
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
	if (!access(CG2ROOT "cgroup.controllers", F_OK))
		write_file(CG2ROOT "cgroup.subtree_control", "-memory");
	mkdir(V1ROOT, 0755);
	ASSERT_EQ(0, mount("none", V1ROOT, "cgroup", 0, "memory"))
		TH_LOG("mount -t cgroup -o memory: %s", strerror(errno));
	ASSERT_EQ(0, mkdir(V1_G, 0755));
}

FIXTURE_TEARDOWN(cgroup_v1)
{
	char buf[256] = "";

	rmdir(V1_G);
	umount(V1ROOT);
	rmdir(V1ROOT);
	knobs_pop();
	/*
	 * The controller goes back to cgroup v2 once the hierarchy is gone,
	 * which waits for the group's last pages (a dying cgroup): later
	 * tests of this boot do not use memory cgroups.
	 */
	write_file("/proc/sys/vm/drop_caches", "3");
	read_file(CG2ROOT "cgroup.controllers", buf, sizeof(buf));
	TH_LOG("memory controller %s on cgroup v2",
	       strstr(buf, "memory") ? "back" : "not yet back");
}

/*
 * A group with a 64 MB memory limit that has pushed most of 64 MB to swap
 * and uses little memory, then gets an 80 MB memory+swap limit and
 * allocates on: memory+swap fills while memory has room left. Reclaim
 * cannot swap, so the OOM killer kills it. (A recovery hook in the charge
 * path that looked at the memory limit only looped there for ever: the
 * fixture's timeout.)
 */
TEST_F_TIMEOUT(cgroup_v1, memsw_limit_ends_in_oom_kill, 180)
{
	int ready[2], go[2], st;
	char me[16], c;
	pid_t pid;

	ASSERT_EQ(0, write_file(V1_G "memory.limit_in_bytes", "64M"));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	if (pid == 0) {
		snprintf(me, sizeof(me), "%d", getpid());
		_exit(write_file(V1_G "cgroup.procs", me) ? 3 :
		      swap_then_grow(ready[1], go[0]));
	}
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	TH_LOG("before: memory %ld kB, memory+swap %ld kB",
	       v1_long("memory.usage_in_bytes", NULL) / 1024,
	       v1_long("memory.memsw.usage_in_bytes", NULL) / 1024);
	ASSERT_GT(32L * MB, v1_long("memory.usage_in_bytes", NULL));
	ASSERT_EQ(0, write_file(V1_G "memory.memsw.limit_in_bytes", "80M"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	TH_LOG("status %d (signal %d), memory+swap peak %ld kB, oom_kill %ld", st,
	       WIFSIGNALED(st) ? WTERMSIG(st) : 0,
	       v1_long("memory.memsw.max_usage_in_bytes", NULL) / 1024,
	       v1_long("memory.oom_control", "oom_kill"));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	EXPECT_LT(0, v1_long("memory.oom_control", "oom_kill"));
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

TEST_HARNESS_MAIN
