/* The supervisor's disk meter (limits.c): walks that count what a layer holds (hard links
 * once, an unreadable directory entered, depth bounded), the disk and files limits with
 * the deleted files init reports, and the tmpfs options the limits give; a directory closed
 * to its owner keeps its mode through every walk.  Runs in a fresh
 * directory under $TMPDIR (or /tmp); tests/run.sh runs it as root and as-user (uid 54321),
 * who enters the mode-000 directory as its owner rather than by privilege. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/human.h"
#include "sandbox/reslimits.h"
#include "tap.h"
#include "txbox.h"

static char root[1024];

static void put(const char *rel, size_t bytes)
{
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        static char block[65536];
        memset(block, 'x', sizeof(block));
        for (size_t done = 0; fd >= 0 && done < bytes;) {
                size_t n = bytes - done < sizeof(block) ? bytes - done : sizeof(block);
                if (write(fd, block, n) != (ssize_t)n)
                        break;
                done += n;
        }
        if (fd >= 0) {
                fsync(fd); /* blocks allocated, not only reserved */
                close(fd);
        }
}

static void sub(const char *rel)
{
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        mkdir(path, 0755);
}

/* A user namespace of ours (our uid mapped to 0 in it), as the sandbox's: a child makes it
 * and waits; its namespace file stays open after it is gone.  -1 when none can be made. */
static int own_userns(void)
{
        int p[2];
        char path[64], map[64];
        if (pipe(p) < 0)
                return -1;
        pid_t c = fork();
        if (c == 0) {
                char x;
                close(p[1]);
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(1);
                _exit(read(p[0], &x, 1) < 0 ? 1 : 0);
        }
        close(p[0]);
        usleep(100000); /* let it unshare */
        /* both ids: a capability in a user namespace covers only files whose owner and group
         * it maps (the sandbox maps both) */
        static const char *const files[] = {"setgroups", "uid_map", "gid_map"};
        bool mapped = true;
        int ns = -1;
        for (size_t k = 0; k < 3 && mapped; k++) {
                snprintf(path, sizeof(path), "/proc/%d/%s", (int)c, files[k]);
                if (k == 0)
                        snprintf(map, sizeof(map), "deny");
                else
                        snprintf(map, sizeof(map), "0 %d 1\n", k == 1 ? (int)getuid() : (int)getgid());
                int fd = open(path, O_WRONLY | O_CLOEXEC);
                mapped = fd >= 0 && write(fd, map, strlen(map)) == (ssize_t)strlen(map);
                if (fd >= 0)
                        close(fd);
        }
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)c);
        if (mapped)
                ns = open(path, O_RDONLY | O_CLOEXEC);
        close(p[1]);
        waitpid(c, NULL, 0);
        return ns;
}

static void walks(void)
{
        uint64_t bytes, entries;
        char a[8192], b[8192];

        sub("upper");
        sub("upper/d");
        put("upper/d/one", 1 << 20);
        put("upper/two", 1 << 20);
        limits_tree_usage(strcat(strcpy(a, root), "/upper"), true, &bytes, &entries, NULL);
        is_int(entries, 3, "a directory and two files: three entries");
        ok(bytes >= 2u << 20 && bytes < 3u << 20, "two files of 1 MiB: about 2 MiB (%llu bytes)",
           (unsigned long long)bytes);

        snprintf(a, sizeof(a), "%s/upper/two", root);
        for (int i = 0; i < 5; i++) {
                snprintf(b, sizeof(b), "%s/upper/link%d", root, i);
                ok(link(a, b) == 0, "hard link %d", i);
        }
        uint64_t linked;
        limits_tree_usage(strcat(strcpy(a, root), "/upper"), true, &linked, &entries, NULL);
        is_int(entries, 8, "links are entries of their own");
        ok(linked < bytes + (64 << 10), "... but a file with six names takes its blocks once (%llu bytes)",
           (unsigned long long)linked);

        /* overlay makes work/work mode 000; the walk enters it all the same */
        sub("work");
        sub("work/work");
        put("work/work/copy-up", 1 << 20);
        snprintf(a, sizeof(a), "%s/work/work", root);
        chmod(a, 0);
        limits_tree_usage(strcat(strcpy(b, root), "/work"), true, &bytes, &entries, NULL);
        ok(bytes >= 1u << 20, "a directory of mode 000 is entered (%llu bytes)", (unsigned long long)bytes);
        struct stat st;
        ok(stat(a, &st) == 0 && (st.st_mode & 07777) == 0, "... and keeps its mode 000 (%o)",
           st.st_mode & 07777);
        chmod(a, 0700);

        /* a directory the program closed in its upper layer: while it runs the walk leaves
         * it as it is (not entered, but by privilege); at the end it is entered, and
         * keeps its mode, which the commit carries over */
        sub("closed");
        sub("closed/z");
        put("closed/z/f", 1 << 20);
        snprintf(a, sizeof(a), "%s/closed/z", root);
        chmod(a, 0);
        limits_tree_usage(strcat(strcpy(b, root), "/closed"), false, &bytes, &entries, NULL);
        ok(stat(a, &st) == 0 && (st.st_mode & 07777) == 0,
           "a closed directory is left closed by a walk during the run (%o)", st.st_mode & 07777);
        if (getuid() != 0)
                ok(bytes < 1u << 20 && entries == 1, "... and not entered (%llu entries)",
                   (unsigned long long)entries);
        else
                ok(bytes >= 1u << 20 && entries == 2, "... and entered by privilege as root (%llu entries)",
                   (unsigned long long)entries);
        bool closed = false;
        limits_tree_usage(strcat(strcpy(b, root), "/closed"), false, &bytes, &entries, &closed);
        ok(closed == (getuid() != 0), "... and the walk says so (%d)", closed);
        /* ...and is walked again from within a user namespace of ours, as the owner of its
         * files, which enters every directory and changes none. */
        int ns = own_userns();
        if (ns >= 0) {
                int r = limits_tree_usage_as_owner(b, ns, &bytes, &entries);
                ok(r == 0 && bytes >= 1u << 20 && entries == 2,
                   "walked as its owner in a user namespace, it is entered (%d, %llu entries)", r,
                   (unsigned long long)entries);
                ok(stat(a, &st) == 0 && (st.st_mode & 07777) == 0, "... and keeps its mode 000 (%o)",
                   st.st_mode & 07777);
                close(ns);
        } else {
                printf("ok %d - # SKIP no user namespace here\n", ++tap_n);
        }
        ok(limits_tree_usage_as_owner(b, -1, &bytes, &entries) < 0, "without a namespace that walk fails (closed)");
        limits_tree_usage(strcat(strcpy(b, root), "/closed"), true, &bytes, &entries, NULL);
        ok(bytes >= 1u << 20 && entries == 2, "the final walk enters it (%llu entries)",
           (unsigned long long)entries);
        ok(stat(a, &st) == 0 && (st.st_mode & 07777) == 0, "... and gives it its mode 000 back (%o)",
           st.st_mode & 07777);
        chmod(a, 0700);

        /* deeper than any layer that commits: not walked, and the walk ends */
        char deep[8192];
        snprintf(deep, sizeof(deep), "%s/deep", root);
        mkdir(deep, 0755);
        int fd = open(deep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; i < 300 && fd >= 0; i++) {
                mkdirat(fd, "d", 0755);
                int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                close(fd);
                fd = next;
        }
        if (fd >= 0)
                close(fd);
        limits_tree_usage(deep, true, &bytes, &entries, NULL);
        ok(entries >= 250 && entries < 300, "a 300-deep chain is walked to a bounded depth (%llu entries)",
           (unsigned long long)entries);
}

static void meter(void)
{
        struct disk_meter m;
        struct txbox_limits l = {.disk = 3 << 20, .files = 20, .memory = 64 << 20}, out;
        struct limit_origins why;
        char up[8192], wk[8192], detail[512];

        snprintf(up, sizeof(up), "%s/upper", root);
        snprintf(wk, sizeof(wk), "%s/work", root);
        limits_resolve(&l, up, &out, &why);
        disk_meter_start(&m, up, wk, &l, &why);
        ok(m.have_base, "the meter notes the file system's free space at the start");
        is_int(m.slack, 4 << 20, "the free-space slack of a 3 MiB limit is the floor, 4 MiB");
        struct txbox_limits big = {.disk = 1ULL << 30};
        struct disk_meter m2;
        disk_meter_start(&m2, up, wk, &big, &why);
        is_int(m2.slack, 256 << 20, "... of 1 GiB a quarter of it: relative to the limit, not an absolute 64 MiB");
        is_int(disk_meter_check(&m, 0, 0, true, detail, sizeof(detail)), LIMIT_NONE,
               "3 MiB in the layers (1 MiB of it in work) under a 3 MiB limit: within");
        is_int(disk_meter_check(&m, 1 << 20, 1, false, detail, sizeof(detail)), LIMIT_DISK,
               "and 1 MiB of deleted files held open on top: over");
        ok(strstr(detail, "(--max-disk)") && strstr(detail, "deleted files still open") &&
                   strstr(detail, "over the disk limit of 3.0 MiB"),
           "the detail says what, in human units, and that --max-disk set it: %s", detail);
        put("upper/three", 1 << 20);
        is_int(disk_meter_check(&m, 0, 0, true, detail, sizeof(detail)), LIMIT_DISK,
               "a third file in the upper layer: over at the final walk (which is the upper layer's)");

        l.disk = 1ULL << 30;
        disk_meter_start(&m, up, wk, &l, &why);
        is_int(disk_meter_check(&m, 0, 13, true, detail, sizeof(detail)), LIMIT_FILES,
               "9 entries and 13 deleted files held open under a files limit of 20: over");
        ok(strstr(detail, "(--max-files)") != NULL, "the detail names --max-files: %s", detail);

        /* A limit nobody set is not named as an option that was given. */
        struct txbox_limits none = {0};
        unsetenv("TXBOX_LIMIT_DISK");
        unsetenv("TXBOX_LIMIT_FILES");
        limits_resolve(&none, up, &out, &why);
        ok(strncmp(why.disk, "txbox's default", 15) == 0 && strstr(why.disk, "--max-disk sets another"),
           "an unset disk limit is txbox's default, and says so: %s", why.disk);
        struct txbox_limits small = {.disk = 100 << 10};
        disk_meter_start(&m, up, wk, &small, &why);
        is_int(disk_meter_check(&m, 0, 0, true, detail, sizeof(detail)), LIMIT_DISK, "a default of 100 KiB: over");
        ok(strstr(detail, "over the disk limit of 100.0 KiB (txbox's default") != NULL,
           "its message says the default, in KiB, not \"0.1 MiB (--max-disk)\": %s", detail);
        setenv("TXBOX_LIMIT_DISK", "5M", 1);
        limits_resolve(&none, up, &out, &why);
        is_str(why.disk, "TXBOX_LIMIT_DISK", "a limit from the environment names its variable");
        unsetenv("TXBOX_LIMIT_DISK");

        char h[32];
        human_size(512, h, sizeof(h));
        is_str(h, "512 B", "human sizes: bytes");
        human_size(100 << 10, h, sizeof(h));
        is_str(h, "100.0 KiB", "human sizes: KiB");
        human_size(3ULL << 30, h, sizeof(h));
        is_str(h, "3.0 GiB", "human sizes: GiB");
}

static void tmpfs_options(void)
{
        char buf[128];
        struct txbox_limits l = {.memory = 128 << 20, .files = 1000000};
        limits_tmpfs_options(&l, buf, sizeof(buf));
        is_str(buf, "mode=1777,size=134217728,nr_inodes=8192",
               "tmpfs: the memory limit, one inode per 16 KiB");
        l.files = 500;
        limits_tmpfs_options(&l, buf, sizeof(buf));
        is_str(buf, "mode=1777,size=134217728,nr_inodes=500", "... never more inodes than the files limit");
        l.files = 10;
        limits_tmpfs_options(&l, buf, sizeof(buf));
        is_str(buf, "mode=1777,size=134217728,nr_inodes=256", "... nor fewer than the sandbox itself needs");
}

int main(void)
{
        const char *tmp = getenv("TMPDIR");
        snprintf(root, sizeof(root), "%s/txbox-limits.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(root)) {
                printf("Bail out! cannot create a directory under %s\n", tmp && *tmp ? tmp : "/tmp");
                return 1;
        }
        walks();
        meter();
        tmpfs_options();
        tap_rmtree(root);
        return tap_done();
}
