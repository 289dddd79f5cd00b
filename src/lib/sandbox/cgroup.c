/* A cgroup per transaction (see cgroup.h). */
#define _GNU_SOURCE
#include "sandbox/cgroup.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/random.h"
#include "txbox.h"

#define STALE_AGE_S 60

enum { CG_MEMORY, CG_PIDS, CG_CPU, CG_N };
static const char *const cg_names[CG_N] = {"memory", "pids", "cpu"};

/* What the machine offers this process: found once, a fact of the process like its
 * credentials (the cgroup tree does not move under a running txbox). */
static struct {
        enum cgroup_mode mode;
        bool cpu;
        char detail[200];
        char v2_parent[PATH_MAX];    /* v2: where transaction cgroups go */
        char v1_dir[CG_N][PATH_MAX]; /* v1: our cgroup in each hierarchy ("" when none) */
} probe;

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* Is word one of the tokens of list (separated by any of seps)? */
static bool has_token(const char *list, const char *word, const char *seps)
{
        size_t n = strlen(word);
        for (const char *p = list; *p;) {
                size_t len = strcspn(p, seps);
                if (len == n && !strncmp(p, word, n))
                        return true;
                p += len;
                p += strspn(p, seps);
        }
        return false;
}

static int read_small(const char *path, char *buf, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t len = 0;
        ssize_t n;

        if (fd < 0)
                return -1;
        while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
                len += (size_t)n;
        buf[len] = '\0';
        return (int)len;
}

/* /proc/self/mountinfo and /proc/self/cgroup, read once for the whole probe. */
struct proc_text {
        char mountinfo[16384], cgroup[4096];
};

/* The next line of text at *pos, copied into line (NULL at the end). */
static char *next_line(const char *text, size_t *pos, char *line, size_t size)
{
        if (!text[*pos])
                return NULL;
        size_t len = strcspn(text + *pos, "\n");
        snprintf(line, size, "%.*s", (int)(len < size ? len : size - 1), text + *pos);
        *pos += len + (text[*pos + len] == '\n');
        return line;
}

/* The mount point and root of the cgroup file system with fstype (and, for v1, the
 * controller among its super options). */
static bool find_mount(const char *mountinfo, const char *fstype, const char *controller, char *mnt,
                       char *root, size_t size)
{
        char line[4096];
        size_t pos = 0;

        while (next_line(mountinfo, &pos, line, sizeof(line))) {
                char *sep = strstr(line, " - "), *save = NULL;
                if (!sep)
                        continue;
                *sep = '\0';
                char *type = strtok_r(sep + 3, " ", &save), *src = strtok_r(NULL, " ", &save);
                char *opts = strtok_r(NULL, " ", &save);
                if (!type || !src || !opts || strcmp(type, fstype) ||
                    (controller && !has_token(opts, controller, ",")))
                        continue;
                char *fields[5];
                save = NULL;
                fields[0] = strtok_r(line, " ", &save);
                for (int i = 1; i < 5 && fields[i - 1]; i++)
                        fields[i] = strtok_r(NULL, " ", &save);
                if (!fields[4] || strchr(fields[4], '\\'))
                        continue; /* escaped characters: not where a cgroup tree is mounted */
                snprintf(mnt, size, "%s", fields[4]);
                snprintf(root, size, "%s", fields[3]);
                return true;
        }
        return false;
}

/* Our cgroup's path in the hierarchy listing controller ("" for v2's "0::" line). */
static bool own_path(const char *cgroup, const char *controller, char *path, size_t size)
{
        char line[4096];
        size_t pos = 0;

        while (next_line(cgroup, &pos, line, sizeof(line))) {
                char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
                if (!b)
                        continue;
                *b = '\0';
                if (*controller ? has_token(a + 1, controller, ",") : (!strncmp(line, "0:", 2) && !a[1])) {
                        snprintf(path, size, "%s", b + 1);
                        return true;
                }
        }
        return false;
}

/* mnt + the part of path beneath root (a cgroup namespace or a bind mount shows a subtree). */
static bool join_path(const char *mnt, const char *root, const char *path, char *out, size_t size)
{
        size_t rl = strlen(root);
        if (strcmp(root, "/")) {
                if (strncmp(path, root, rl) || (path[rl] && path[rl] != '/'))
                        return false;
                path += rl;
        }
        int n = snprintf(out, size, "%s%s", mnt, strcmp(path, "/") ? path : "");
        return n > 0 && (size_t)n < size;
}

static bool writable_dir(const char *dir)
{
        char procs[PATH_MAX + 16];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
        return access(dir, W_OK) == 0 && access(procs, W_OK) == 0;
}

bool cgroup_v2_parent(const char *mountinfo, const char *cgroup, char *parent, size_t size, bool *cpu)
{
        char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32], ctl[256];

        if (size)
                parent[0] = '\0';
        if (!find_mount(mountinfo, "cgroup2", NULL, mnt, root, sizeof(mnt)))
                return false;
        snprintf(parent, size, "%s", mnt);
        if (!own_path(cgroup, "", path, sizeof(path)) || !join_path(mnt, root, path, dir, sizeof(dir)))
                return false;
        for (;;) {
                snprintf(file, sizeof(file), "%s/cgroup.subtree_control", dir);
                if (read_small(file, ctl, sizeof(ctl)) >= 0 && has_token(ctl, "memory", " \n") &&
                    has_token(ctl, "pids", " \n") && writable_dir(dir)) {
                        *cpu = has_token(ctl, "cpu", " \n");
                        snprintf(parent, size, "%s", dir);
                        return true;
                }
                char *slash = strrchr(dir, '/');
                if (strlen(dir) <= strlen(mnt) || !slash)
                        break;
                *slash = '\0';
        }
        return false;
}

/* v2: the nearest ancestor of our cgroup (itself included) that hands memory and pids to
 * its children and that we may write. */
static bool probe_v2(const struct proc_text *t)
{
        char dir[PATH_MAX];

        if (cgroup_v2_parent(t->mountinfo, t->cgroup, dir, sizeof(dir), &probe.cpu)) {
                probe.mode = CGROUP_V2;
                snprintf(probe.v2_parent, sizeof(probe.v2_parent), "%s", dir);
                snprintf(probe.detail, sizeof(probe.detail), "cgroup v2 beneath %.120s (memory, pids%s)", dir,
                         probe.cpu ? ", cpu" : "");
                return true;
        }
        if (dir[0])
                snprintf(probe.detail, sizeof(probe.detail),
                         "cgroup v2 at %.80s: no writable ancestor of this process's cgroup enables memory "
                                 "and pids", dir);
        return false;
}

/* v1: our own cgroup in the memory and pids hierarchies (cpu if there), if we may write them. */
static bool probe_v1(const struct proc_text *t)
{
        char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX];

        for (int c = 0; c < CG_N; c++) {
                probe.v1_dir[c][0] = '\0';
                if (!find_mount(t->mountinfo, "cgroup", cg_names[c], mnt, root, sizeof(mnt)) ||
                    !own_path(t->cgroup, cg_names[c], path, sizeof(path)) ||
                    !join_path(mnt, root, path, probe.v1_dir[c], sizeof(probe.v1_dir[c])) ||
                    access(probe.v1_dir[c], W_OK) < 0)
                        probe.v1_dir[c][0] = '\0';
        }
        if (!probe.v1_dir[CG_MEMORY][0] || !probe.v1_dir[CG_PIDS][0])
                return false;
        probe.mode = CGROUP_V1;
        probe.cpu = probe.v1_dir[CG_CPU][0] != '\0';
        snprintf(probe.detail, sizeof(probe.detail), "cgroup v1 memory and pids hierarchies%s, writable here",
                 probe.cpu ? " (and cpu)" : "");
        return true;
}

/* Test builds only: TXBOX_TEST_CGROUP2=DIR takes DIR, a directory of a cgroup2 hierarchy, for
 * the parent of transaction cgroups even when it enables no controller (this project's
 * machines mount cgroup2 without any: the v2 path, CLONE_INTO_CGROUP included, is tested in a
 * private mount of it); knobs it lacks are then skipped. */
static bool test_v2(void)
{
#ifdef TXBOX_TESTING
        const char *dir = getenv("TXBOX_TEST_CGROUP2");
        if (!dir || dir[0] != '/' || !writable_dir(dir))
                return false;
        probe.mode = CGROUP_V2;
        snprintf(probe.v2_parent, sizeof(probe.v2_parent), "%s", dir);
        snprintf(probe.detail, sizeof(probe.detail), "cgroup v2 beneath %.120s (test: no controller needed)",
                 dir);
        return true;
#else
        return false;
#endif
}

static void run_probe(void)
{
        char v2[sizeof(probe.detail)];
        _cleanup_free_ struct proc_text *t = xcalloc(1, sizeof(*t));

        probe.mode = CGROUP_NONE;
        if (test_v2())
                return;
        if (read_small("/proc/self/mountinfo", t->mountinfo, sizeof(t->mountinfo)) < 0 ||
            read_small("/proc/self/cgroup", t->cgroup, sizeof(t->cgroup)) < 0) {
                snprintf(probe.detail, sizeof(probe.detail),
                         "cannot read /proc/self/mountinfo or /proc/self/cgroup");
                return;
        }
        if (probe_v2(t))
                return;
        snprintf(v2, sizeof(v2), "%s", probe.detail);
        if (probe_v1(t))
                return;
        if (!v2[0])
                snprintf(v2, sizeof(v2), "no cgroup v2 mounted");
        snprintf(probe.detail, sizeof(probe.detail), "%.150s; no writable cgroup v1 memory and pids either",
                 v2);
}

enum cgroup_mode cgroup_probe(char *detail, size_t size)
{
        pthread_once(&probe_once, run_probe);
        if (detail && size)
                snprintf(detail, size, "%s", probe.detail);
        return probe.mode;
}

bool cgroup_has_cpu(void)
{
        return cgroup_probe(NULL, 0) != CGROUP_NONE && probe.cpu;
}

/* ---- one transaction's cgroup ---- */

struct cgroup_tx {
        enum cgroup_mode mode;
        size_t n;                            /* directories made */
        char path[CGROUP_MAX_FDS][PATH_MAX];
        int tasks[CGROUP_MAX_FDS]; /* v1: each directory's tasks file, for the sandbox's init */
        int dir;                   /* v2: the directory, for CLONE_INTO_CGROUP */
        int events; /* v2 memory.events, v1 memory.oom_control */
        char peak[PATH_MAX + 32]; /* v2 memory.peak, v1 memory.max_usage_in_bytes */
};

static int write_knob(const char *dir, const char *knob, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int write_knob(const char *dir, const char *knob, const char *fmt, ...)
{
        char path[PATH_MAX + 64], val[64];
        va_list ap;

        snprintf(path, sizeof(path), "%s/%s", dir, knob);
        va_start(ap, fmt);
        int len = vsnprintf(val, sizeof(val), fmt, ap);
        va_end(ap);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write(fd, val, (size_t)len) == len ? 0 : -errno;
}

/* Remove cgroups of ours that a killed txbox left: "txbox-PID-..." of a process that is gone,
 * made over a minute ago (a pid seen from another pid namespace may be someone else's; such
 * a one, just made and not yet joined, must survive). */
static void sweep_stale(const char *parent)
{
        _cleanup_close_ int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? dir_stream(dfd) : NULL;
        struct dirent *e;
        struct stat st;
        time_t now = time(NULL);

        while (d && (e = readdir(d))) {
                unsigned long pid;
                if (sscanf(e->d_name, "txbox-%lu-", &pid) != 1 || pid == 0 || pid > INT_MAX)
                        continue;
                if ((kill((pid_t)pid, 0) == 0 || errno != ESRCH) ||
                    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || now - st.st_ctime < STALE_AGE_S)
                        continue;
                unlinkat(dfd, e->d_name, AT_REMOVEDIR); /* EBUSY while processes are in it */
        }
        if (d)
                closedir(d);
}

/* A new directory beneath parent; v1: with its tasks file open for init, v2: itself open for
 * the clone. */
static int make_dir(struct cgroup_tx *cg, const char *parent, const char *name, struct txbox_error *err)
{
        char *p = cg->path[cg->n], file[PATH_MAX + 16];

        snprintf(p, PATH_MAX, "%s/%s", parent, name);
        if (mkdir(p, 0755) < 0)
                return tx_err(err, errno, "cannot create the cgroup '%s': %s", p, strerror(errno));
        size_t i = cg->n++;
        snprintf(file, sizeof(file), "%s/tasks", p);
        int fd = cg->mode == CGROUP_V1 ? (cg->tasks[i] = open(file, O_WRONLY | O_CLOEXEC))
                                       : (cg->dir = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (fd < 0)
                return tx_err(err, errno, "cannot open '%s': %s", cg->mode == CGROUP_V1 ? file : p,
                              strerror(errno));
        return 0;
}

static int knob_or_fail(const char *dir, const char *knob, uint64_t v, struct txbox_error *err)
{
        int r = write_knob(dir, knob, "%llu", (unsigned long long)v);
#ifdef TXBOX_TESTING
        if (r == -ENOENT && getenv("TXBOX_TEST_CGROUP2"))
                return 0; /* a hierarchy without controllers (test_v2) */
#endif
        return r < 0 ? tx_err(err, -r, "cannot set %s/%s to %llu: %s", dir, knob, (unsigned long long)v,
                              strerror(-r))
                     : 0;
}

static int open_events(struct cgroup_tx *cg, const char *dir, const char *file, struct txbox_error *err)
{
        char path[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        if ((cg->events = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return tx_err(err, errno, "cannot open '%s': %s", path, strerror(errno));
        return 0;
}

static int setup_v2(struct cgroup_tx *cg, const struct txbox_limits *l, const char *name,
                    struct txbox_error *err)
{
        int r;
        if ((r = make_dir(cg, probe.v2_parent, name, err)) < 0)
                return r;
        const char *d = cg->path[0];
        if ((r = knob_or_fail(d, "memory.max", l->memory, err)) < 0 ||
            (r = knob_or_fail(d, "pids.max", l->procs + 2, err)) < 0)
                return r;
        /* The limit is memory, not memory plus swap; and an OOM kill ends the whole sandbox. */
        write_knob(d, "memory.swap.max", "0");
        write_knob(d, "memory.oom.group", "1");
        if (l->cpu_milli &&
            (r = write_knob(d, "cpu.max", "%llu 100000", (unsigned long long)l->cpu_milli * 100)) < 0)
                return tx_err(err, -r, "cannot set %s/cpu.max: %s", d, strerror(-r));
        snprintf(cg->peak, sizeof(cg->peak), "%s/memory.peak", d);
        int r2 = open_events(cg, d, "memory.events", err);
#ifdef TXBOX_TESTING
        if (r2 == -ENOENT && getenv("TXBOX_TEST_CGROUP2"))
                return 0;
#endif
        return r2;
}

bool cgroup_pid_max_per_ns(void)
{
        struct utsname u;
        unsigned major = 0, minor = 0;
        return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
               (major > 6 || (major == 6 && minor >= 14));
}

static int setup_v1(struct cgroup_tx *cg, const struct txbox_limits *l, const char *name,
                    struct txbox_error *err)
{
        /* A v1 pids cgroup costs a transaction about as much CPU as its memory cgroup, for
         * nothing the sandbox's own pid_max (Linux >= 6.14) does not already enforce. */
        bool pids = !cgroup_pid_max_per_ns();
        int r;

        for (int c = 0; c < CG_N; c++) {
                if (!probe.v1_dir[c][0] || (c == CG_CPU && !l->cpu_milli) || (c == CG_PIDS && !pids))
                        continue;
                if ((r = make_dir(cg, probe.v1_dir[c], name, err)) < 0)
                        return r;
                const char *d = cg->path[cg->n - 1];
                if (c == CG_MEMORY) {
                        if ((r = knob_or_fail(d, "memory.limit_in_bytes", l->memory, err)) < 0)
                                return r;
                        write_knob(d, "memory.memsw.limit_in_bytes", "%llu", (unsigned long long)l->memory);
                        snprintf(cg->peak, sizeof(cg->peak), "%s/memory.max_usage_in_bytes", d);
                        if ((r = open_events(cg, d, "memory.oom_control", err)) < 0)
                                return r;
                } else if (c == CG_PIDS) {
                        if ((r = knob_or_fail(d, "pids.max", l->procs + 2, err)) < 0)
                                return r;
                } else if ((r = knob_or_fail(d, "cpu.cfs_period_us", 100000, err)) < 0 ||
                           (r = knob_or_fail(d, "cpu.cfs_quota_us", l->cpu_milli * 100, err)) < 0)
                        return r;
        }
        return 0;
}

static void sweep_all(void)
{
        if (probe.mode == CGROUP_V2)
                sweep_stale(probe.v2_parent);
        for (int c = 0; probe.mode == CGROUP_V1 && c < CG_N; c++)
                if (probe.v1_dir[c][0])
                        sweep_stale(probe.v1_dir[c]);
}

int cgroup_tx_create(const struct txbox_limits *l, struct cgroup_tx **out, struct txbox_error *err)
{
        char name[64], hex[17];
        enum cgroup_mode mode = cgroup_probe(NULL, 0);
        int r;

        *out = NULL;
        if (mode == CGROUP_NONE)
                return 0;
        if (l->cpu_milli && !probe.cpu)
                return tx_err(err, ENOTSUP,
                              "--max-cpus needs the cpu controller in this process's cgroup (txbox doctor)");
        random_hex(hex, 8);
        /* Leftovers are rare (a txbox killed mid-run) and harmless (empty directories):
         * looked for by one transaction in sixteen, off the common path. */
        if (hex[0] == '0')
                sweep_all();
        snprintf(name, sizeof(name), "txbox-%d-%s", (int)getpid(), hex);
        struct cgroup_tx *cg = xcalloc(1, sizeof(*cg));
        cg->mode = mode;
        cg->events = cg->dir = -1;
        for (int i = 0; i < CGROUP_MAX_FDS; i++)
                cg->tasks[i] = -1;
        r = mode == CGROUP_V2 ? setup_v2(cg, l, name, err) : setup_v1(cg, l, name, err);
        if (r < 0) {
                cgroup_tx_destroy(cg);
                return r;
        }
        *out = cg;
        return 0;
}

int cgroup_tx_handoff(const struct cgroup_tx *cg, int fds[CGROUP_MAX_FDS], size_t *n)
{
        *n = 0;
        for (size_t i = 0; cg && cg->mode == CGROUP_V1 && i < cg->n; i++)
                fds[(*n)++] = cg->tasks[i];
        return cg && cg->mode == CGROUP_V2 ? cg->dir : -1;
}

int cgroup_tx_attach(struct cgroup_tx *cg, pid_t pid, struct txbox_error *err)
{
        char buf[24], procs[PATH_MAX + 16];
        int len = snprintf(buf, sizeof(buf), "%d", (int)pid);

        for (size_t i = 0; i < cg->n; i++) {
                snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg->path[i]);
                _cleanup_close_ int fd = open(procs, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, buf, (size_t)len) != len)
                        return tx_err(err, errno, "cannot move the sandbox into the cgroup '%s': %s",
                                      cg->path[i], strerror(errno));
        }
        return 0;
}

uint64_t cgroup_tx_oom_kills(const struct cgroup_tx *cg)
{
        char buf[512];
        unsigned long long v = 0;

        if (!cg || cg->events < 0)
                return 0;
        ssize_t n = pread(cg->events, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        for (char *p = buf; (p = strstr(p, "oom_kill ")); p++)
                if (p == buf || p[-1] == '\n')
                        return sscanf(p + 9, "%llu", &v) == 1 ? v : 0;
        return 0;
}

uint64_t cgroup_tx_memory_peak(const struct cgroup_tx *cg)
{
        char buf[32];
        return cg && cg->peak[0] && read_small(cg->peak, buf, sizeof(buf)) > 0 ? strtoull(buf, NULL, 10) : 0;
}

/* Removals that found processes still exiting; retried by cgroup_reap. */
static char *pending[32];

void cgroup_reap(bool wait)
{
        for (int round = 0; round < (wait ? 100 : 1); round++) {
                bool left = false;
                for (size_t i = 0; i < ARRAY_SIZE(pending); i++) {
                        if (!pending[i])
                                continue;
                        if (rmdir(pending[i]) == 0 || errno != EBUSY) {
                                free(pending[i]);
                                pending[i] = NULL;
                        } else
                                left = true;
                }
                if (!left)
                        return;
                if (wait)
                        nanosleep(&(struct timespec){0, 10000000}, NULL);
        }
}

void cgroup_tx_destroy(struct cgroup_tx *cg)
{
        if (!cg)
                return;
        closep(&cg->dir);
        for (int i = 0; i < CGROUP_MAX_FDS; i++)
                closep(&cg->tasks[i]);
        closep(&cg->events);
        for (size_t i = 0; i < cg->n; i++) {
                if (rmdir(cg->path[i]) == 0 || errno != EBUSY)
                        continue;
                for (size_t j = 0; j < ARRAY_SIZE(pending); j++)
                        if (!pending[j]) {
                                pending[j] = xstrdup(cg->path[i]);
                                break;
                        }
        }
        free(cg);
}
