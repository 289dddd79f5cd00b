/* Resource limits and environment filtering.
 *
 * Where each limit is enforced (docs/SECURITY.md has the reasons):
 *   processes  pid_max of the sandbox's own pid namespace (kernel-enforced, root included:
 *              fork fails with EAGAIN), plus RLIMIT_NPROC (binds non-root users only)
 *   memory     RLIMIT_DATA per process, and the sandbox's init sums resident memory and
 *              kills every process when the total passes the limit
 *   CPU time   RLIMIT_CPU per process; wall time by the supervisor's --timeout
 *   disk       the supervisor measures the upper layer while the program runs and kills the
 *              sandbox past the limit; RLIMIT_FSIZE bounds any single file to the same
 *   files      RLIMIT_NOFILE
 */
#define _GNU_SOURCE
#include "reslimits.h"

#include <ctype.h>
#include <stddef.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "util.h"

#define GiB (1024ULL * 1024 * 1024)

/* A size with an optional K, M or G suffix; 0 when absent or malformed. */
static uint64_t env_size(const char *name)
{
        const char *v = getenv(name);
        char *end;
        if (!v || !*v)
                return 0;
        unsigned long long n = strtoull(v, &end, 10);
        switch (*end) {
        case 'K': case 'k': n <<= 10; end++; break;
        case 'M': case 'm': n <<= 20; end++; break;
        case 'G': case 'g': n <<= 30; end++; break;
        default: break;
        }
        return *end ? 0 : n;
}

/* The caller's defaults: TXBOX_LIMIT_{PROCS,MEMORY,CPU,DISK,FILES} in txbox's environment
 * (for faces that have no option for a limit yet, and for tests). */
static void env_defaults(struct txbox_limits *l)
{
        static const struct { const char *name; size_t off; } vars[] = {
                {"TXBOX_LIMIT_PROCS", offsetof(struct txbox_limits, procs)},
                {"TXBOX_LIMIT_MEMORY", offsetof(struct txbox_limits, memory)},
                {"TXBOX_LIMIT_CPU", offsetof(struct txbox_limits, cpu_s)},
                {"TXBOX_LIMIT_DISK", offsetof(struct txbox_limits, disk)},
                {"TXBOX_LIMIT_FILES", offsetof(struct txbox_limits, files)},
        };
        for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
                uint64_t *f = (uint64_t *)((char *)l + vars[i].off);
                if (!*f)
                        *f = env_size(vars[i].name);
        }
}

void limits_resolve(const struct txbox_limits *in, const char *upper, struct txbox_limits *out)
{
        struct sysinfo si;
        struct statvfs sv;

        *out = *in;
        env_defaults(out);
        if (!out->procs)
                out->procs = 1024;
        if (!out->files)
                out->files = 4096;
        if (!out->memory) {
                out->memory = 4 * GiB;
                if (sysinfo(&si) == 0 && si.totalram)
                        out->memory = (uint64_t)si.totalram * si.mem_unit / 2;
        }
        if (!out->disk) {
                out->disk = 10 * GiB;
                if (upper && statvfs(upper, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize / 2 < out->disk)
                        out->disk = (uint64_t)sv.f_bavail * sv.f_frsize / 2;
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
            (r = set_limit(RLIMIT_FSIZE, l->disk)) < 0 || (r = set_limit(RLIMIT_NOFILE, l->files)) < 0 ||
            (r = set_limit(RLIMIT_CORE, 0)) < 0)
                return r;
        /* SIGXCPU at the limit (the program can report it), SIGKILL a second later. */
        if (l->cpu_s && (r = set_limit(RLIMIT_CPU, l->cpu_s + 1)) < 0)
                return r;
        struct rlimit cpu;
        if (l->cpu_s && getrlimit(RLIMIT_CPU, &cpu) == 0 && cpu.rlim_max > 1) {
                cpu.rlim_cur = cpu.rlim_max - 1;
                setrlimit(RLIMIT_CPU, &cpu);
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

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* Proportional set size of one process: pages shared after fork count once in the total. */
/* A process's proportional set size (shared pages divided among their sharers, so a
 * thousand forks of one interpreter count once), from smaps_rollup: exact, but the kernel
 * walks every page table under the process's mmap lock to produce it. */
static uint64_t process_pss(const char *pid)
{
        char path[300], buf[1024];
        unsigned long long kb;

        snprintf(path, sizeof(path), "/proc/%s/smaps_rollup", pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return 0; /* gone, or a kernel thread */
        buf[n] = '\0';
        const char *p = strstr(buf, "\nPss:");
        return p && sscanf(p + 5, "%llu", &kb) == 1 ? (uint64_t)kb * 1024 : 0;
}

/* Its resident set size, from the counters of /proc/PID/statm: cheap, and never below the
 * proportional set size. */
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
        return sscanf(buf, "%llu %llu", &size, &resident) == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static uint64_t sum_over_processes(uint64_t (*of)(const char *pid))
{
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        uint64_t total = 0;
        struct dirent *e;

        while (d && (e = readdir(d)))
                if (isdigit((unsigned char)e->d_name[0]))
                        total += of(e->d_name);
        return total;
}

/* Ten times a second in init: the cheap resident sum settles almost every check (a build
 * stays far below the limit); only above it is the exact proportional sum taken.  Walking
 * every page table each time cost a build a few per cent. */
bool limits_memory_exceeded(uint64_t limit)
{
        return sum_over_processes(process_rss) > limit && sum_over_processes(process_pss) > limit;
}

static uint64_t tree_total;

static int tree_add(const char *path, const struct stat *st, int flag, struct FTW *f)
{
        (void)path, (void)flag, (void)f;
        tree_total += (uint64_t)st->st_blocks * 512;
        return 0;
}

uint64_t limits_tree_usage(const char *dir)
{
        /* nftw has no context argument; the supervisor is single-threaded. */
        tree_total = 0;
        nftw(dir, tree_add, 32, FTW_PHYS | FTW_MOUNT);
        return tree_total;
}

/* ---- environment ---- */

static bool has_word(const char *name, const char *word)
{
        size_t wl = strlen(word);
        for (const char *p = name; (p = strcasestr(p, word)); p++) {
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
        static const char *const prefixes[] = {"AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "VAULT_", "ARM_CLIENT"};
        static const char *const words[] = {"AUTH", "PASS", "PAT", "APIKEY", "DSN"};

        for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
                if (strcasestr(name, parts[i]))
                        return true;
        for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
                if (!strncasecmp(name, prefixes[i], strlen(prefixes[i])))
                        return true;
        for (size_t i = 0; i < ARRAY_SIZE(words); i++)
                if (has_word(name, words[i]))
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
                snprintf(name, sizeof(name), "%.*s", (int)(len < 255 ? len : 255), envp[i]);
                if (!limits_env_secret(name) || kept(envp[i], len, keep)) {
                        v[j++] = envp[i];
                        continue;
                }
                if (off + len + 5 < size)
                        off += (size_t)snprintf(dropped + off, size - off, "%s%.*s", off ? "," : "", (int)len, envp[i]);
                else if (off + 5 <= size && (off < 3 || strcmp(dropped + off - 3, "...")))
                        off += (size_t)snprintf(dropped + off, size - off, "%s...", off ? "," : "");
        }
        v[j] = NULL;
        *out = v;
}
