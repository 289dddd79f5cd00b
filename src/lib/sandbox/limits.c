/* Resource limits and environment filtering.
 *
 * Where each limit is enforced (docs/SECURITY.md, "Limits: what holds", has the reasons):
 *   processes  pid_max of the sandbox's own pid namespace (kernel-enforced, root included:
 *              fork fails with EAGAIN), pids.max of its cgroup when there is one, and
 *              RLIMIT_NPROC (binds non-root users only)
 *   memory     memory.max of the transaction's cgroup when there is one (cgroup.c); else the
 *              sandbox's init sums every 100 ms its processes' memory, /tmp, /dev/shm, open
 *              memfds and System V segments, and kills everything past the limit.  Always
 *              RLIMIT_DATA per process, and /tmp and /dev/shm are sized to the limit.
 *   CPU        RLIMIT_CPU per process; wall time by the supervisor's --timeout; bandwidth by
 *              cpu.max of the cgroup (--max-cpus)
 *   disk       the supervisor walks the upper and work layers, adds the deleted files the
 *              sandbox still holds open (init looks at every descriptor), and checks every
 *              20 ms that the file system's free space has not dropped by more than the limit
 *              plus a slack (that bounds what no walk can see, e.g. a file held only by a
 *              descriptor in flight in a unix socket); RLIMIT_FSIZE stops any single file
 *   files      the same walks count entries (files written); tmpfs nr_inodes; RLIMIT_NOFILE
 *              bounds the open files of each process
 */
#define _GNU_SOURCE
#include "sandbox/reslimits.h"

#include <ctype.h>
#include <stddef.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/str.h"
#include "txbox.h"

#define MiB (1024ULL * 1024)
#define GiB (1024ULL * 1024 * 1024)
#define WALK_MAX_DEPTH 258 /* one past the changeset's: a deeper layer never commits anyway */

/* The caller's defaults: TXBOX_LIMIT_{PROCS,MEMORY,CPU,DISK,FILES,OPEN_FILES} in txbox's
 * environment (for faces that have no option for a limit yet, and for tests), parsed as the
 * --max- options are; one that is malformed or too large leaves txbox's own default. */
static void env_defaults(struct txbox_limits *l)
{
        static const struct { const char *name; size_t off; } vars[] = {
                {"TXBOX_LIMIT_PROCS", offsetof(struct txbox_limits, procs)},
                {"TXBOX_LIMIT_MEMORY", offsetof(struct txbox_limits, memory)},
                {"TXBOX_LIMIT_CPU", offsetof(struct txbox_limits, cpu_s)},
                {"TXBOX_LIMIT_DISK", offsetof(struct txbox_limits, disk)},
                {"TXBOX_LIMIT_FILES", offsetof(struct txbox_limits, files)},
                {"TXBOX_LIMIT_OPEN_FILES", offsetof(struct txbox_limits, open_files)},
        };
        for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
                uint64_t *f = (uint64_t *)((char *)l + vars[i].off);
                if (!*f)
                        *f = parse_size(getenv(vars[i].name));
        }
}

void limits_resolve(const struct txbox_limits *in, const char *upper, struct txbox_limits *out,
                    struct limit_origins *why)
{
        struct limit_origins none;
        struct sysinfo si;
        struct statvfs sv;
        bool have_fs = false;

        if (!why)
                why = &none;
        *out = *in;
        env_defaults(out);
        snprintf(why->disk, sizeof(why->disk), "%s", in->disk ? "--max-disk" : "TXBOX_LIMIT_DISK");
        snprintf(why->files, sizeof(why->files), "%s", in->files ? "--max-files" : "TXBOX_LIMIT_FILES");
        if (!out->procs)
                out->procs = 1024;
        if (!out->open_files)
                out->open_files = 4096;
        if (!out->memory) {
                out->memory = 4 * GiB;
                if (sysinfo(&si) == 0 && si.totalram)
                        out->memory = (uint64_t)si.totalram * si.mem_unit / 2;
        }
        if ((!out->disk || !out->files) && upper)
                have_fs = statvfs(upper, &sv) == 0;
        if (!out->disk) {
                out->disk = 10 * GiB;
                snprintf(why->disk, sizeof(why->disk), "txbox's default, 10 GiB; --max-disk sets another");
                if (have_fs && (uint64_t)sv.f_bavail * sv.f_frsize / 2 < out->disk) {
                        out->disk = (uint64_t)sv.f_bavail * sv.f_frsize / 2;
                        snprintf(why->disk, sizeof(why->disk),
                                 "txbox's default: half the free space of the workspace's file system when "
                                 "the run began; --max-disk sets another");
                }
        }
        if (!out->files) {
                out->files = 1000000;
                snprintf(why->files, sizeof(why->files), "txbox's default, 1,000,000; --max-files sets another");
                if (have_fs && sv.f_files && sv.f_favail / 2 < out->files) {
                        out->files = sv.f_favail / 2 ? sv.f_favail / 2 : 1;
                        snprintf(why->files, sizeof(why->files),
                                 "txbox's default: half the free inodes of the workspace's file system when "
                                 "the run began; --max-files sets another");
                }
        }
}

static int set_limit(int resource, uint64_t v)
{
        struct rlimit rl, cur;
        if (getrlimit(resource, &cur) < 0)
                return -errno;
        rl.rlim_cur = rl.rlim_max = (rlim_t)v;
        /* Never raise a limit the caller already had lower. */
        if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
                rl.rlim_cur = rl.rlim_max = cur.rlim_max;
        return setrlimit(resource, &rl) < 0 ? -errno : 0;
}

int limits_apply_rlimits(const struct txbox_limits *l)
{
        int r;
        if ((r = set_limit(RLIMIT_NPROC, l->procs)) < 0 || (r = set_limit(RLIMIT_DATA, l->memory)) < 0 ||
            (r = set_limit(RLIMIT_FSIZE, l->disk)) < 0 || (r = set_limit(RLIMIT_NOFILE, l->open_files)) < 0 ||
            (r = set_limit(RLIMIT_CORE, 0)) < 0)
                return r;
        /* SIGXCPU at the limit (the program can report it), SIGKILL a second later. */
        if (l->cpu_s && (r = set_limit(RLIMIT_CPU, l->cpu_s + 1)) < 0)
                return r;
        struct rlimit cpu;
        if (l->cpu_s && getrlimit(RLIMIT_CPU, &cpu) == 0 && cpu.rlim_max > 1) {
                cpu.rlim_cur = cpu.rlim_max - 1;
                if (setrlimit(RLIMIT_CPU, &cpu) < 0)
                        return -errno;
        }
        return 0;
}

int limits_set_pid_max(uint64_t procs)
{
        char buf[32];
        /* pid numbers are handed out cyclically below pid_max, so at most pid_max - 1
         * processes exist at once; the kernel's floor is 301. */
        uint64_t max = procs + 1 < 301 ? 301 : procs + 1;
        int len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)max);
        _cleanup_close_ int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write(fd, buf, (size_t)len) == len ? 0 : -errno;
}

void limits_tmpfs_options(const struct txbox_limits *l, char *buf, size_t size)
{
        /* Pages: each mount at most the memory limit (the total of both counts against it).
         * Inodes: each costs the kernel about a kilobyte nobody else counts, so at most one
         * per 16 KiB of the limit, and never more than the files limit. */
        uint64_t inodes = l->memory / (16 * 1024);
        if (inodes < 1024)
                inodes = 1024;
        if (inodes > l->files)
                inodes = l->files;
        if (inodes < 256)
                inodes = 256; /* the sandbox's own /dev staging and workspace path need a few */
        snprintf(buf, size, "mode=1777,size=%llu,nr_inodes=%llu",
                 (unsigned long long)(l->memory < 4096 ? 4096 : l->memory), (unsigned long long)inodes);
}

/* ---- sets of inodes (each file counted once) ---- */

/* Open addressing over a fixed table: nothing to allocate in init or per walk; a full
 * table counts again rather than drop (too much, never too little). */
#define INODE_SET_SIZE 4096

struct inode_set {
        struct { dev_t dev; ino_t ino; } e[INODE_SET_SIZE];
        size_t n;
};

/* True when (dev, ino) was already in the set (adds it otherwise).  The set is made at its
 * first use (*sp NULL until then): most looks find no file that needs one. */
static bool inode_seen(struct inode_set **sp, dev_t dev, ino_t ino)
{
        size_t h = ((size_t)ino * 0x9E3779B97F4A7C15ULL ^ (size_t)dev) % INODE_SET_SIZE;
        if (!*sp && !(*sp = calloc(1, sizeof(**sp))))
                return false;
        struct inode_set *s = *sp;
        if (s->n >= INODE_SET_SIZE * 3 / 4)
                return false;
        for (;; h = (h + 1) % INODE_SET_SIZE) {
                if (!s->e[h].ino) {
                        s->e[h].dev = dev, s->e[h].ino = ino ? ino : 1;
                        s->n++;
                        return false;
                }
                if (s->e[h].dev == dev && s->e[h].ino == ino)
                        return true;
        }
}

/* ---- init's look at the sandbox: memory, and deleted files held open ---- */

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* A process's resident set size, from the counters of /proc/PID/statm: cheap, and never
 * below the proportional set size. */
static uint64_t process_rss(const char *pid)
{
        char path[300], buf[256];
        unsigned long long size, resident;

        snprintf(path, sizeof(path), "/proc/%s/statm", pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        return sscanf(buf, "%llu %llu", &size, &resident) == 2
                       ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE)
                       : 0;
}

static bool dev_in(dev_t d, const dev_t *set, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (set[i] && set[i] == d)
                        return true;
        return false;
}

/* Deleted regular files a process holds open: on the workspace's file system (disk), or
 * shared memory (memfds); deleted files of /tmp and /dev/shm are in those mounts' usage. */
static void scan_fds(const char *pid, const struct limits_devs *devs, struct inode_set **seen,
                     struct limits_usage *u)
{
        char path[300];
        struct dirent *e;
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%s/fd", pid);
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(closedirp) DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                return;
        }
        while ((e = readdir(d))) {
                /* Follows the descriptor's magic link: the open file itself. */
                if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, 0) < 0)
                        continue;
                if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || inode_seen(seen, st.st_dev, st.st_ino))
                        continue;
                uint64_t bytes = (uint64_t)st.st_blocks * 512;
                if (dev_in(st.st_dev, devs->disk, ARRAY_SIZE(devs->disk))) {
                        u->held_disk += bytes;
                        u->held_disk_files++;
                } else if (devs->shm && st.st_dev == devs->shm)
                        u->held_shm += bytes;
        }
}

static uint64_t tmpfs_used(const char *path)
{
        struct statfs sf;
        return statfs(path, &sf) == 0 && sf.f_blocks >= sf.f_bfree
                       ? (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize
                       : 0;
}

/* Resident bytes of the System V segments of the sandbox's ipc namespace. */
static uint64_t sysv_shm(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sysvipc/shm", "re");
        char line[512];
        int col = -1;
        uint64_t total = 0;

        if (!f || !fgets(line, sizeof(line), f))
                return 0;
        int i = 0;
        for (char *save = NULL, *t = strtok_r(line, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save),
             i++)
                if (!strcmp(t, "rss"))
                        col = i;
        while (col >= 0 && fgets(line, sizeof(line), f)) {
                i = 0;
                for (char *save = NULL, *t = strtok_r(line, " \t\n", &save); t;
                     t = strtok_r(NULL, " \t\n", &save), i++)
                        if (i == col)
                                total += strtoull(t, NULL, 10);
        }
        return total;
}

void limits_scan(const struct limits_devs *devs, bool fds, bool memory, struct limits_usage *u)
{
        _cleanup_free_ struct inode_set *seen = NULL;
        _cleanup_(closedirp) DIR *d = fds || memory ? opendir("/proc") : NULL;
        struct dirent *e;

        memset(u, 0, sizeof(*u));
        while (d && (e = readdir(d))) {
                if (!isdigit((unsigned char)e->d_name[0]) || !strcmp(e->d_name, "1"))
                        continue; /* init (pid 1) is txbox's own */
                if (fds)
                        scan_fds(e->d_name, devs, &seen, u);
                if (memory)
                        u->rss += process_rss(e->d_name);
        }
        if (memory) {
                u->tmpfs = tmpfs_used("/tmp") + tmpfs_used("/dev/shm");
                u->sysv = sysv_shm();
        }
}

void limits_hints(const char *workspace, uint64_t *avail, uint64_t *shmem)
{
        struct statfs sf;
        char buf[4096];
        unsigned long long kb;

        /* The overlay reports its upper layer's file system. */
        *avail = statfs(workspace, &sf) == 0 ? (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize : 0;
        if (!shmem)
                return;
        *shmem = 0;
        _cleanup_close_ int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return;
        buf[n] = '\0';
        const char *p = strstr(buf, "\nShmem:");
        if (p && sscanf(p + 7, "%llu", &kb) == 1)
                *shmem = (uint64_t)kb * 1024;
}

/* A process's proportional set size (shared pages divided among their sharers, so a
 * thousand forks of one interpreter count once) and the shared-memory part of it, from
 * smaps_rollup: exact, but the kernel walks every page table under the process's mmap lock
 * to produce it. */
static void process_pss(const char *pid, uint64_t *pss, uint64_t *shmem)
{
        char path[300], buf[2048];
        unsigned long long kb;

        snprintf(path, sizeof(path), "/proc/%s/smaps_rollup", pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return; /* gone, or a kernel thread */
        buf[n] = '\0';
        const char *p = strstr(buf, "\nPss:");
        if (p && sscanf(p + 5, "%llu", &kb) == 1)
                *pss += (uint64_t)kb * 1024;
        p = strstr(buf, "\nPss_Shmem:");
        if (p && sscanf(p + 11, "%llu", &kb) == 1)
                *shmem += (uint64_t)kb * 1024;
}

/* Shared memory is counted once, as the larger of what the processes map of it and what
 * the file systems and memfds hold. */
static uint64_t shm_total(const struct limits_usage *u)
{
        return u->tmpfs + u->held_shm + u->sysv;
}

bool limits_memory_exceeded(const struct limits_usage *u, uint64_t limit, uint64_t *total)
{
        /* Ten times a second in init: the cheap resident sum settles almost every check (a
         * build stays far below the limit); only above it is the exact sum taken.  Walking
         * every page table each time cost a build a few per cent. */
        *total = u->rss + shm_total(u);
        if (*total <= limit)
                return false;
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        struct dirent *e;
        uint64_t pss = 0, shmem = 0;
        while (d && (e = readdir(d)))
                if (isdigit((unsigned char)e->d_name[0]) && strcmp(e->d_name, "1"))
                        process_pss(e->d_name, &pss, &shmem);
        uint64_t shm = shm_total(u);
        *total = pss - (shmem < pss ? shmem : pss) + (shmem > shm ? shmem : shm);
        return *total > limit;
}

void limits_probe_shm_dev(struct limits_devs *devs)
{
        struct stat st;
        _cleanup_close_ int fd = memfd_create("txbox-probe", MFD_CLOEXEC);
        devs->shm = fd >= 0 && fstat(fd, &st) == 0 ? st.st_dev : 0;
}

/* ---- the supervisor's disk meter ---- */

struct walk {
        bool lend;
        struct inode_set *links;
        uint64_t bytes, entries;
        bool closed; /* a directory could not be entered */
};

/* lend: a directory its owner cannot enter (a program made it 000, as an unprivileged user;
 * overlay's work/work is 000 too) is opened to the owner for its walk and given its mode
 * back after; without lend it is not entered but noted (w->closed): while the program runs
 * its layer is not ours to change under it, and the meter walks it again from within the
 * sandbox's user namespace (limits_tree_usage_as_owner). */
static void walk_tree(int dfd, unsigned depth, struct walk *w)
{
        _cleanup_(closedirp) DIR *d = fdopendir(dfd);
        struct dirent *e;
        struct stat st;

        if (!d) {
                close(dfd);
                return;
        }
        while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
                    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                w->entries++;
                /* A file with several names takes its blocks once. */
                if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && inode_seen(&w->links, st.st_dev, st.st_ino))
                        continue;
                w->bytes += (uint64_t)st.st_blocks * 512;
                if (!S_ISDIR(st.st_mode) || depth >= WALK_MAX_DEPTH)
                        continue;
                int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                bool lent = false;
                if (sub < 0 && errno == EACCES && w->lend && (st.st_mode & S_IRWXU) != S_IRWXU &&
                    fchmodat(dirfd(d), e->d_name, (st.st_mode | S_IRWXU) & 07777, 0) == 0) {
                        lent = true;
                        sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (sub < 0 && errno == EACCES)
                        w->closed = true;
                if (sub >= 0)
                        walk_tree(sub, depth + 1, w);
                if (lent && fchmodat(dirfd(d), e->d_name, st.st_mode & 07777, 0) < 0) {
                        /* cannot fail but for a vanished entry: the chmod above just worked */
                }
        }
}

void limits_tree_usage(const char *dir, bool lend, uint64_t *bytes, uint64_t *entries, bool *closed)
{
        struct walk w = {.lend = lend};
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd >= 0)
                walk_tree(fd, 0, &w);
        else if (errno == EACCES)
                w.closed = true;
        free(w.links);
        *bytes = w.bytes;
        *entries = w.entries;
        if (closed)
                *closed = w.closed;
}

int limits_tree_usage_as_owner(const char *dir, int userns_fd, uint64_t *bytes, uint64_t *entries)
{
        struct {
                uint64_t bytes, entries;
                int err;
        } r = {.err = EIO};
        int p[2];

        if (userns_fd < 0)
                return -EBADF;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        /* A child of ours joins the namespace (a process with threads cannot): there it holds
         * every capability over the ids the namespace maps, which are the layer's owner's and
         * nobody else's; it reads directory entries and stats them, and changes nothing. */
        pid_t self = getpid(), c = fork();
        if (c == 0) {
                close(p[0]);
                if (die_with_parent(self) < 0)
                        _exit(1);
                bool closed = false;
                if (setns(userns_fd, CLONE_NEWUSER) < 0) {
                        r.err = errno;
                } else {
                        limits_tree_usage(dir, false, &r.bytes, &r.entries, &closed);
                        r.err = closed ? EACCES : 0;
                }
                _exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
        }
        close(p[1]);
        ssize_t n = -1;
        if (c > 0) {
                while ((n = read(p[0], &r, sizeof(r))) < 0 && errno == EINTR)
                        ;
                while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        int e = c < 0 ? errno : n != sizeof(r) ? EIO : r.err;
        close(p[0]);
        if (e)
                return -e;
        *bytes = r.bytes;
        *entries = r.entries;
        return 0;
}

static void fmt_size(uint64_t v, char *buf, size_t size) { human_size(v, buf, size); }

void disk_meter_start(struct disk_meter *m, const char *upper, const char *work, const struct txbox_limits *l,
                      const struct limit_origins *why)
{
        struct statfs sf;

        memset(m, 0, sizeof(*m));
        m->why = why;
        m->upper = upper;
        m->work = work;
        m->limit = l->disk;
        m->files_limit = l->files;
        /* Relative: the walks see every file of the layers, so this bounds only what no walk
         * can (a deleted file held by a descriptor in flight in a unix socket, or mapped). */
        m->slack = l->disk / 4 > DISK_SLACK_MIN ? l->disk / 4 : DISK_SLACK_MIN;
        m->files_slack = l->files / 4 > FILES_SLACK_MIN ? l->files / 4 : FILES_SLACK_MIN;
        if (upper && statfs(upper, &sf) == 0) {
                m->have_base = true;
                m->base_avail = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;
                m->have_inodes = sf.f_files > 0;
                m->base_ffree = (uint64_t)sf.f_ffree;
        }
        m->walk_gap = DISK_WALK_US;
        m->next_walk = mono_us() + m->walk_gap;
        m->userns_fd = -1;
}

/* The layers; at the end (final) only the upper one, what would be committed: the work
 * layer holds the overlay's own few directories then. */
static void meter_walk(struct disk_meter *m, bool final)
{
        uint64_t b, n;
        int64_t t0 = mono_us();

        m->walked = m->walked_files = 0;
        m->unmeasured = false;
        const char *dirs[] = {m->upper, final ? NULL : m->work};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                bool closed = false;
                if (!dirs[i])
                        continue;
                /* the work layer is the overlay's own; the upper one the program's until
                 * it has ended */
                limits_tree_usage(dirs[i], final || dirs[i] == m->work, &b, &n, &closed);
                /* A directory the program closed to its owner would hide what it holds: walk
                 * the layer again as the owner, from within the sandbox's namespace; where
                 * even that fails, the layer cannot be measured, and counts as over. */
                if (closed && limits_tree_usage_as_owner(dirs[i], m->userns_fd, &b, &n) < 0)
                        m->unmeasured = true;
                m->walked += b;
                m->walked_files += n;
        }
        /* A walk costs time in proportion to the files written: keep it under a tenth of
         * the supervisor's time. */
        int64_t spent = mono_us() - t0;
        m->walk_gap = spent * 10 > DISK_WALK_US ? spent * 10 : DISK_WALK_US;
        m->next_walk = mono_us() + m->walk_gap;
}

/* The free-space bound: whoever made the file system lose more than limit + slack during
 * the run, the transaction is stopped (it cannot be told from others). */
static int meter_statfs(struct disk_meter *m, char *detail, size_t size)
{
        struct statfs sf;
        char a[32], b[32], c[32];

        if (!m->have_base || statfs(m->upper, &sf) < 0)
                return LIMIT_NONE;
        uint64_t avail = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;
        uint64_t drop = m->base_avail > avail ? m->base_avail - avail : 0;
        if (drop > m->limit + m->slack) {
                fmt_size(drop, a, sizeof(a));
                fmt_size(m->limit, b, sizeof(b));
                fmt_size(m->slack, c, sizeof(c));
                snprintf(detail, size,
                         "the file system's free space dropped by %s during the run, over the disk limit "
                         "of %s plus %s of slack (%s)",
                         a, b, c, m->why ? m->why->disk : "--max-disk");
                return LIMIT_DISK;
        }
        uint64_t fdrop = m->base_ffree > (uint64_t)sf.f_ffree ? m->base_ffree - (uint64_t)sf.f_ffree : 0;
        if (m->have_inodes && fdrop > m->files_limit + m->files_slack) {
                snprintf(detail, size,
                         "the file system lost %llu free inodes during the run, over the limit of %llu "
                         "plus %llu of slack (%s)",
                         (unsigned long long)fdrop, (unsigned long long)m->files_limit,
                         (unsigned long long)m->files_slack, m->why ? m->why->files : "--max-files");
                return LIMIT_FILES;
        }
        return LIMIT_NONE;
}

int disk_meter_check(struct disk_meter *m, uint64_t held, uint64_t held_files, bool walk, char *detail,
                     size_t size)
{
        char a[32], b[32], c[32];

        if (walk || mono_us() >= m->next_walk)
                meter_walk(m, walk);
        if (m->unmeasured) {
                snprintf(detail, size,
                         "a directory of the layer is closed to its owner and could not be measured; it "
                         "counts as over the limit of the disk (--max-disk) and files (--max-files)");
                return LIMIT_DISK;
        }
        if (m->walked + held > m->limit) {
                fmt_size(m->walked + held, a, sizeof(a));
                fmt_size(held, b, sizeof(b));
                fmt_size(m->limit, c, sizeof(c));
                snprintf(detail, size,
                         "%s held on the workspace's file system (%s of it in deleted files still open), "
                         "over the disk limit of %s (%s)",
                         a, b, c, m->why ? m->why->disk : "--max-disk");
                return LIMIT_DISK;
        }
        if (m->walked_files + held_files > m->files_limit) {
                snprintf(detail, size, "%llu files written, over the limit of %llu (%s)",
                         (unsigned long long)(m->walked_files + held_files), (unsigned long long)m->files_limit,
                         m->why ? m->why->files : "--max-files");
                return LIMIT_FILES;
        }
        return walk ? LIMIT_NONE : meter_statfs(m, detail, size);
}

/* ---- environment ---- */

/* word in upper-case name as a whole '_'-separated part. */
static bool has_word(const char *name, const char *word)
{
        size_t wl = strlen(word);
        for (const char *p = name; (p = strstr(p, word)); p++) {
                bool start = p == name || p[-1] == '_';
                bool end = p[wl] == '\0' || p[wl] == '_';
                if (start && end)
                        return true;
        }
        return false;
}

bool limits_env_secret(const char *name)
{
        static const char *const parts[] = {"TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD",
                                            "CREDENTIAL", "PRIVATE", "COOKIE", "SESSION"};
        static const char *const prefixes[] = {"AWS_",    "AZURE_", "GOOGLE_",
                                               "GCLOUD_", "VAULT_", "ARM_CLIENT"};
        static const char *const words[] = {"AUTH", "PASS", "PAT", "APIKEY", "DSN"};
        char up[256];
        size_t n = 0;

        /* Case-insensitive: matched in an upper-case copy (every start of the sandbox looks at
         * every variable; strcasestr cost it more than the rest of its preparation).  A name
         * too long for the copy is taken for a secret. */
        for (; name[n] && n < sizeof(up) - 1; n++)
                up[n] = name[n] >= 'a' && name[n] <= 'z' ? (char)(name[n] - 'a' + 'A') : name[n];
        if (name[n])
                return true;
        up[n] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
                if (strstr(up, parts[i]))
                        return true;
        for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
                if (!strncmp(up, prefixes[i], strlen(prefixes[i])))
                        return true;
        for (size_t i = 0; i < ARRAY_SIZE(words); i++)
                if (has_word(up, words[i]))
                        return true;
        return false;
}

static bool kept(const char *name, size_t len, const char *const *keep)
{
        for (size_t i = 0; keep && keep[i]; i++)
                if (strlen(keep[i]) == len && !strncmp(keep[i], name, len))
                        return true;
        return false;
}

void limits_filter_env(char *const *envp, const char *const *keep, char ***out, char *dropped, size_t size)
{
        size_t n = 0, j = 0, off = 0;

        while (envp && envp[n])
                n++;
        char **v = xcalloc(n + 1, sizeof(*v));
        if (size)
                dropped[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                const char *eq = strchr(envp[i], '=');
                size_t len = eq ? (size_t)(eq - envp[i]) : strlen(envp[i]);
                char name[256];
                size_t nl = len < 255 ? len : 255;
                memcpy(name, envp[i], nl);
                name[nl] = '\0';
                if (!limits_env_secret(name) || kept(envp[i], len, keep)) {
                        v[j++] = envp[i];
                        continue;
                }
                if (off + len + 5 < size)
                        off += (size_t)snprintf(dropped + off, size - off, "%s%.*s", off ? "," : "", (int)len,
                                                envp[i]);
                else if (off + 5 <= size && (off < 3 || strcmp(dropped + off - 3, "...")))
                        off += (size_t)snprintf(dropped + off, size - off, "%s...", off ? "," : "");
        }
        v[j] = NULL;
        *out = v;
}
