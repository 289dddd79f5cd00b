/* Where a transaction's cgroup goes under cgroup v2 (cgroup.c): the nearest ancestor of our
 * own cgroup that enables memory and pids for its children and that we may write.  The
 * cgroup file system is imitated by plain files under $TMPDIR (or /tmp): the choice reads
 * only cgroup.subtree_control and the rights on the directory and cgroup.procs.  Runs as
 * root and as-user (uid 54321), where a read-only cgroup.procs is passed over. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "tap.h"

static char root[1024];

/* A cgroup directory rel (beneath root) enabling ctl for its children. */
static void cg(const char *rel, const char *ctl, mode_t procs_mode)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%s/cgroup.subtree_control", root, rel);
        FILE *f = fopen(path, "we");
        if (f) {
                fputs(ctl, f);
                fclose(f);
        }
        snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, rel);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, procs_mode);
        if (fd >= 0)
                close(fd);
        chmod(path, procs_mode);
}

static char mountinfo[8192];

static void mounted(const char *at, const char *fsroot)
{
        snprintf(mountinfo, sizeof(mountinfo),
                 "21 26 0:20 / /proc rw,relatime - proc proc rw\n"
                 "30 25 0:26 %s %s/%s rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n"
                 "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
                 fsroot, root, at);
}

static bool pick(const char *own, char *parent, bool *cpu)
{
        char cgroup[512];
        snprintf(cgroup, sizeof(cgroup), "4:memory:/\n0::%s\n", own);
        return cgroup_v2_parent(mountinfo, cgroup, parent, 4096, cpu);
}

int main(void)
{
        const char *tmp = getenv("TMPDIR");
        char parent[4096], want[4096];
        bool cpu = false;

        snprintf(root, sizeof(root), "%s/txbox-cgroup.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(root)) {
                printf("Bail out! cannot create a directory under %s\n", tmp && *tmp ? tmp : "/tmp");
                return 1;
        }
        /* A systemd machine: the session scope is a leaf, its slices enable controllers. */
        cg("cg", "cpu io memory pids\n", 0644);
        cg("cg/user.slice", "memory pids\n", 0644);
        cg("cg/user.slice/user-1000.slice", "memory pids\n", 0644);
        cg("cg/user.slice/user-1000.slice/session-3.scope", "", 0644);
        mounted("cg", "/");

        ok(pick("/user.slice/user-1000.slice/session-3.scope", parent, &cpu),
           "a session scope finds a parent");
        snprintf(want, sizeof(want), "%s/cg/user.slice/user-1000.slice", root);
        is_str(parent, want, "... the nearest slice that enables memory and pids");
        ok(!cpu, "... which does not enable cpu");

        ok(pick("/", parent, &cpu), "the root cgroup itself");
        snprintf(want, sizeof(want), "%s/cg", root);
        is_str(parent, want, "... is used as it is");
        ok(cpu, "... and enables cpu");

        cg("cg/user.slice/user-1000.slice", "pids\n", 0644);
        ok(pick("/user.slice/user-1000.slice/session-3.scope", parent, &cpu),
           "a slice without memory is passed over");
        snprintf(want, sizeof(want), "%s/cg/user.slice", root);
        is_str(parent, want, "... for the one above it");
        cg("cg/user.slice/user-1000.slice", "memory pids\n", 0644);

        /* A cgroup namespace (or a bind mount) shows a subtree: the mount's root is stripped. */
        mounted("cg/user.slice", "/user.slice");
        ok(pick("/user.slice/user-1000.slice/session-3.scope", parent, &cpu), "a mount of a subtree");
        snprintf(want, sizeof(want), "%s/cg/user.slice/user-1000.slice", root);
        is_str(parent, want, "... maps our cgroup beneath its mount point");
        ok(!pick("/system.slice/foo.service", parent, &cpu), "a cgroup outside the mounted subtree: none");

        mounted("cg", "/");
        cg("cg/user.slice", "", 0644);
        cg("cg/user.slice/user-1000.slice", "", 0644);
        cg("cg", "io\n", 0644);
        ok(!pick("/user.slice/user-1000.slice/session-3.scope", parent, &cpu),
           "no ancestor enables memory and pids: none");
        snprintf(want, sizeof(want), "%s/cg", root);
        is_str(parent, want, "... and the mount point is named for the message");

        snprintf(mountinfo, sizeof(mountinfo),
                 "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
        ok(!pick("/", parent, &cpu) && !parent[0], "no cgroup2 mounted: none");

        if (geteuid() != 0) {
                /* Rights: our own slice is not ours to write; the one above is. */
                cg("cg", "memory pids\n", 0644);
                cg("cg/user.slice", "memory pids\n", 0644);
                cg("cg/user.slice/user-1000.slice", "memory pids\n", 0444);
                mounted("cg", "/");
                ok(pick("/user.slice/user-1000.slice/session-3.scope", parent, &cpu), "as a user");
                snprintf(want, sizeof(want), "%s/cg/user.slice", root);
                is_str(parent, want, "... a slice whose cgroup.procs we may not write is passed over");
        } else {
                for (int i = 0; i < 2; i++)
                        printf("ok %d - rights are checked as a user # SKIP root may write anything\n",
                               ++tap_n);
        }
        tap_rmtree(root);
        return tap_done();
}
