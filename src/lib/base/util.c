/* Errors, memory, strings, time and safe file operations. */
#define _GNU_SOURCE
#include "base/util.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>

#include "base/syscalls.h"

int tx_err(struct txbox_error *err, int code, const char *fmt, ...)
{
        if (code <= 0)
                code = EIO;
        if (err) {
                va_list ap;
                err->code = code;
                va_start(ap, fmt);
                vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
                va_end(ap);
        }
        return -code;
}

int tx_err_wrap(struct txbox_error *err, const char *fmt, ...)
{
        char prefix[512], old[sizeof(err->msg)];
        va_list ap;

        if (!err)
                return -EIO;
        if (err->code <= 0)
                err->code = EIO;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof(old));
        /* Truncation is fine: the innermost detail is the least important when too long. */
        size_t n = strlen(prefix);
        memcpy(err->msg, prefix, n);
        if (n + 2 < sizeof(err->msg)) {
                memcpy(err->msg + n, ": ", 2);
                n += 2;
        }
        size_t rest = sizeof(err->msg) - 1 - n;
        size_t olen = strnlen(old, sizeof(old) - 1);
        if (olen > rest)
                olen = rest;
        memcpy(err->msg + n, old, olen);
        err->msg[n + olen] = '\0';
        return -err->code;
}

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                abort();
        return p;
}

void *xcalloc(size_t n, size_t m)
{
        void *p = calloc(n ? n : 1, m ? m : 1);
        if (!p)
                abort();
        return p;
}

void *xrealloc(void *p, size_t n)
{
        p = realloc(p, n ? n : 1);
        if (!p)
                abort();
        return p;
}

char *xstrdup(const char *s)
{
        char *p = strdup(s);
        if (!p)
                abort();
        return p;
}

char *xstrdup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

void fput_pct_escaped(FILE *f, const char *s)
{
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c <= 0x20 || c == '%' || c == 0x7f)
                        fprintf(f, "%%%02x", c);
                else
                        fputc(c, f);
        }
}

char *xasprintf(const char *fmt, ...)
{
        char *p;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&p, fmt, ap) < 0)
                abort();
        va_end(ap);
        return p;
}

size_t strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

char **strv_dup(char *const *v)
{
        size_t n = strv_len(v);
        char **r = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                r[i] = xstrdup(v[i]);
        return r;
}

uint64_t parse_size(const char *s)
{
        char *end;
        uint64_t mult = 1;

        if (!s || *s < '0' || *s > '9')
                return 0;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        switch (*end) {
        case 'k': case 'K': mult = 1ULL << 10; end++; break;
        case 'm': case 'M': mult = 1ULL << 20; end++; break;
        case 'g': case 'G': mult = 1ULL << 30; end++; break;
        default: break;
        }
        return *end || errno == ERANGE || v == 0 || v > UINT64_MAX / mult ? 0 : v * mult;
}

bool str_has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool path_is_within(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 0)
                return true;
        if (strncmp(path, dir, n) != 0)
                return false;
        return path[n] == '\0' || path[n] == '/' || dir[n - 1] == '/';
}

void strvec_push(struct strvec *sv, char *s)
{
        if (sv->n + 2 > sv->cap) {
                sv->cap = sv->cap ? sv->cap * 2 : 8;
                sv->v = xrealloc(sv->v, sv->cap * sizeof(char *));
        }
        sv->v[sv->n++] = s;
        sv->v[sv->n] = NULL;
}

bool strvec_lists_path(const struct strvec *sv, const char *path)
{
        size_t n = strlen(path);
        for (size_t i = 0; i < sv->n; i++)
                if (!strncmp(sv->v[i], path, n) && sv->v[i][n] == ' ')
                        return true;
        return false;
}

void strvec_clear(struct strvec *sv)
{
        for (size_t i = 0; i < sv->n; i++)
                free(sv->v[i]);
        free(sv->v);
        memset(sv, 0, sizeof(*sv));
}

int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mono_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static char boot[40];

static void read_boot_id(void)
{
        int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, boot, sizeof(boot) - 1) : -1;

        if (fd >= 0)
                close(fd);
        boot[n == 37 ? 36 : 0] = '\0'; /* 36 characters and a newline, or nothing */
}

const char *boot_id(void)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, read_boot_id);
        return boot;
}

int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
        sigset_t all, old;

        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int r = pthread_create(t, NULL, fn, arg);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return r;
}

int die_with_parent(pid_t parent)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return -errno;
        if (parent > 0 && getppid() != parent)
                return -ESRCH; /* reparented: the parent died before the request took hold */
        return 0;
}

void trace_mark(const char *what)
{
        static int on = -1;
        static int64_t t0;
        if (on < 0) {
                const char *e = getenv("TXBOX_TRACE");
                on = e && *e && strcmp(e, "0");
                t0 = mono_us();
        }
        if (on)
                fprintf(stderr, "txbox-trace %6d %8.3f ms %s\n", (int)getpid(), (mono_us() - t0) / 1000.0,
                        what);
}

void random_hex(char *out, size_t nbytes)
{
        unsigned char buf[64];
        static const char hex[] = "0123456789abcdef";

        if (nbytes > sizeof(buf))
                nbytes = sizeof(buf);
        if (getrandom(buf, nbytes, 0) != (ssize_t)nbytes) {
                /* getrandom cannot fail for small sizes after boot; fall back to time+pid. */
                uint64_t x = (uint64_t)mono_us() ^ ((uint64_t)getpid() << 32);
                for (size_t i = 0; i < nbytes; i++, x = x * 6364136223846793005ULL + 1)
                        buf[i] = (unsigned char)(x >> 56);
        }
        for (size_t i = 0; i < nbytes; i++) {
                out[2 * i] = hex[buf[i] >> 4];
                out[2 * i + 1] = hex[buf[i] & 15];
        }
        out[2 * nbytes] = '\0';
}

/* ---- files ---- */

/* Remove NAME in DIRFD, of type TYPE (a d_type; DT_UNKNOWN: look): 0 when it is gone, 1
 * with *sub open on it when it is a directory that still holds something, or -errno. */
static int rm_one(int dirfd, const char *name, unsigned char type, int *sub)
{
        struct stat st;

        if (type == DT_UNKNOWN) {
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return errno == ENOENT ? 0 : -errno;
                type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
        }
        int flag = type == DT_DIR ? AT_REMOVEDIR : 0;
        int r = unlinkat(dirfd, name, flag);
        if (r < 0 && errno == EACCES && fchmod(dirfd, 0700) == 0) /* a program made it read-only */
                r = unlinkat(dirfd, name, flag);
        if (r == 0 || errno == ENOENT)
                return 0;
        if (!flag || (errno != ENOTEMPTY && errno != EEXIST))
                return -errno;
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == EACCES) {
                /* overlay leaves work/work with mode 000; we own it, so make it readable. */
                if (fchmodat(dirfd, name, 0700, 0) == 0)
                        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        *sub = fd;
        return 1;
}

int rm_rf_at(int dirfd, const char *name)
{
        int fd, r = rm_one(dirfd, name, DT_UNKNOWN, &fd);

        if (r <= 0)
                return r;
        r = rm_children(fd);
        close(fd);
        if (r < 0)
                return r;
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

/* Depth first without recursion, reading with getdents64 into a buffer on the stack: no
 * allocation and a bounded stack, so a thread may run it while another clone()s (the trash
 * sweeper, txn/sweep.c), and a program that nested directories a million deep cannot make it
 * overflow.  The first RM_KEEP levels keep their descriptor and the position to read on
 * from (the directory just emptied, which then goes); deeper ones are reopened through ".."
 * and read again from the start. */
#define RM_KEEP 128
DIR *dir_stream(int dirfd)
{
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

        if (!d && fd >= 0) {
                int e = errno;
                close(fd);
                errno = e;
        }
        if (d)
                rewinddir(d); /* the duplicate shares the original's position */
        return d;
}

int rm_children(int root)
{
        int fds[RM_KEEP], depth = 0, r = 0;
        off_t resume[RM_KEEP], start = 0;
        char buf[1024] __attribute__((aligned(8)));
        int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);

        if (cur < 0)
                return -errno;
        for (;;) {
                off_t pos = start;
                ssize_t n = 0;
                int sub = -1;

                if (lseek(cur, start, SEEK_SET) < 0) {
                        r = -errno;
                        break;
                }
                while (sub < 0 && (n = getdents64(cur, buf, sizeof(buf))) > 0)
                        for (ssize_t off = 0; off < n && sub < 0;) {
                                struct dirent64 *de = (struct dirent64 *)(buf + off);
                                off_t here = pos;
                                off += de->d_reclen;
                                pos = de->d_off;
                                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                                        continue;
                                int k = rm_one(cur, de->d_name, de->d_type, &sub);
                                if (k < 0) {
                                        r = k;
                                        goto out;
                                }
                                if (sub >= 0 && depth < RM_KEEP)
                                        fds[depth] = cur, resume[depth] = here;
                                else if (sub >= 0)
                                        close(cur);
                        }
                if (sub >= 0) {
                        depth++;
                        cur = sub;
                        start = 0;
                        continue;
                }
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (depth == 0)
                        break; /* root is empty */
                depth--;
                if (depth < RM_KEEP) {
                        close(cur);
                        cur = fds[depth];
                        start = resume[depth];
                } else {
                        int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        close(cur);
                        cur = up;
                        start = 0;
                        if (cur < 0) {
                                r = -errno;
                                break;
                        }
                }
        }
out:
        if (cur >= 0)
                close(cur);
        for (int i = 0; i < depth && i < RM_KEEP; i++)
                close(fds[i]);
        return r;
}

int mkdir_p_at(int dirfd, const char *relpath, mode_t mode)
{
        char buf[PATH_MAX];

        if (strlen(relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        /* Usually all there, or all but the last: one call instead of one per component. */
        if (*relpath && (mkdirat(dirfd, relpath, mode) == 0 || errno == EEXIST))
                return 0;
        strcpy(buf, relpath);
        for (char *p = buf;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (*buf && mkdirat(dirfd, buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = c;
                if (!c)
                        break;
        }
        return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
        return mkdir_p_at(AT_FDCWD, path, mode);
}

/* Component walk for kernels without openat2: every component opened O_NOFOLLOW relative
 * to the previous one, ".." refused, so the walk can neither follow a symlink nor leave
 * rootfd. */
static int open_beneath_walk(int rootfd, const char *relpath, int flags, mode_t mode)
{
        char buf[PATH_MAX];
        _cleanup_close_ int cur = -1;
        char *save = NULL, *comp, *next;

        if (strlen(relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, relpath);
        cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cur < 0)
                return -errno;
        comp = strtok_r(buf, "/", &save);
        if (!comp)
                return openat(rootfd, ".", flags | O_CLOEXEC);
        for (; comp; comp = next) {
                next = strtok_r(NULL, "/", &save);
                if (!strcmp(comp, ".."))
                        return -EXDEV;
                if (!strcmp(comp, ".") && next)
                        continue;
                int f = next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                             : flags | O_NOFOLLOW | O_CLOEXEC;
                int fd = openat(cur, comp, f, mode);
                if (fd < 0)
                        return errno == ENOTDIR && next ? -ELOOP : -errno;
                closep(&cur);
                cur = fd;
        }
        return TAKE_FD(cur);
}

int open_beneath(int rootfd, const char *relpath, int flags, mode_t mode)
{
        static int have_openat2 = -1;
        const char *p = *relpath ? relpath : ".";

        if (have_openat2 != 0) {
                struct open_how how = {
                        .flags = (uint64_t)(flags | O_CLOEXEC),
                        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                int fd = sys_openat2(rootfd, p, &how, sizeof(how));
                if (fd >= 0 || errno != ENOSYS) {
                        have_openat2 = 1;
                        return fd >= 0 ? fd : -errno;
                }
                have_openat2 = 0;
        }
        return open_beneath_walk(rootfd, p, flags, mode);
}

int open_parent_beneath(int rootfd, const char *relpath, const char **base)
{
        const char *slash = strrchr(relpath, '/');
        char buf[PATH_MAX];

        if (!slash) {
                *base = relpath;
                return open_beneath(rootfd, "", O_PATH | O_DIRECTORY, 0);
        }
        if ((size_t)(slash - relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, relpath, slash - relpath);
        buf[slash - relpath] = '\0';
        *base = slash + 1;
        return open_beneath(rootfd, buf, O_PATH | O_DIRECTORY, 0);
}

int make_parent_beneath(int rootfd, const char *relpath, mode_t mode, const char **base)
{
        char buf[PATH_MAX];
        const char *slash = strrchr(relpath, '/');
        int fd = open_parent_beneath(rootfd, relpath, base);
        char *save = NULL;

        if (fd != -ENOENT || !slash)
                return fd;
        if ((size_t)(slash - relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, relpath, slash - relpath);
        buf[slash - relpath] = '\0';
        /* Missing parents: made and entered one by one, O_NOFOLLOW, so that a symlink in
         * the way is an error (ELOOP/ENOTDIR), never a detour. */
        if ((fd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return -errno;
        for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (!strcmp(c, "."))
                        continue;
                if (!strcmp(c, "..") || (mkdirat(fd, c, mode) < 0 && errno != EEXIST)) {
                        int e = !strcmp(c, "..") ? EXDEV : errno;
                        close(fd);
                        return -e;
                }
                int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = errno;
                close(fd);
                if (next < 0)
                        return e == ENOTDIR ? -ELOOP : -e;
                fd = next;
        }
        *base = slash + 1;
        return fd;
}

int lstat_beneath(int rootfd, const char *relpath, struct stat *st)
{
        const char *base;
        _cleanup_close_ int dir = open_parent_beneath(rootfd, relpath, &base);

        if (dir < 0)
                return dir;
        return fstatat(dir, base, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int open_beneath_regular(int rootfd, const char *relpath, struct stat *st)
{
        struct stat sb;
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        _cleanup_close_ int path = open_beneath(rootfd, relpath, O_PATH, 0);

        if (!st)
                st = &sb;
        if (path < 0)
                return path;
        if (fstat(path, st) < 0)
                return -errno;
        if (!S_ISREG(st->st_mode))
                return -EINVAL;
        /* Reopened through the descriptor's own magic link: the same inode, whatever the
         * name now leads to. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path);
        int fd = open(proc, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int read_beneath(int rootfd, const char *relpath, size_t max, char **out, size_t *len)
{
        _cleanup_close_ int fd = open_beneath_regular(rootfd, relpath, NULL);

        return fd < 0 ? fd : read_fd(fd, max, out, len);
}

int fsync_dirfd_at(int dirfd, const char *relpath)
{
        _cleanup_close_ int fd = openat(dirfd, *relpath ? relpath : ".",
                                        O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fsync(fd) < 0 ? -errno : 0;
}

static int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len) {
                ssize_t w = write(fd, p, len);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += w;
                len -= (size_t)w;
        }
        return 0;
}

int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, bool durable)
{
        char tmp[NAME_MAX + 1];
        int r;

        if (snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp))
                return -ENAMETOOLONG;
        _cleanup_close_ int fd =
                openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, data, len);
        if (r == 0 && durable && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0) {
                unlinkat(dirfd, tmp, 0);
                return r;
        }
        return durable ? fsync_dirfd_at(dirfd, ".") : 0;
}

int read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        return fd < 0 ? -errno : read_fd(fd, max, out, len);
}

int read_fd(int fd, size_t max, char **out, size_t *len)
{
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, cap = 0;

        for (;;) {
                if (n + 4096 + 1 > cap) {
                        cap = cap ? cap * 2 : 8192;
                        buf = xrealloc(buf, cap);
                }
                ssize_t r = read(fd, buf + n, cap - n - 1);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
                if (n > max)
                        return -EFBIG;
        }
        if (!buf)
                buf = xcalloc(1, 1);
        buf[n] = '\0';
        if (len)
                *len = n;
        *out = TAKE_PTR(buf);
        return 0;
}

static ssize_t read_full(int fd, char *buf, size_t len)
{
        size_t n = 0;
        while (n < len) {
                ssize_t r = read(fd, buf + n, len - n);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        break;
                n += (size_t)r;
        }
        return (ssize_t)n;
}

int files_equal_at(int dirfd_a, const char *a, int dirfd_b, const char *b)
{
        _cleanup_close_ int fa = openat(dirfd_a, a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int fb = openat(dirfd_b, b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat sa, sb;
        enum { CHUNK = 65536 };
        _cleanup_free_ char *ba = NULL, *bb = NULL;

        if (fa < 0 || fb < 0)
                return -errno;
        if (fstat(fa, &sa) < 0 || fstat(fb, &sb) < 0)
                return -errno;
        if (sa.st_size != sb.st_size)
                return 0;
        ba = xmalloc(CHUNK);
        bb = xmalloc(CHUNK);
        for (;;) {
                ssize_t ra = read_full(fa, ba, CHUNK);
                ssize_t rb = read_full(fb, bb, CHUNK);
                if (ra < 0 || rb < 0)
                        return (int)(ra < 0 ? ra : rb);
                if (ra != rb || memcmp(ba, bb, (size_t)ra) != 0)
                        return 0;
                if (ra == 0)
                        return 1;
        }
}

/* ---- text for humans ---- */

/* Length of the UTF-8 sequence at s (1-4), or 0 when it is not valid UTF-8 (overlong,
 * surrogate, beyond U+10FFFF, cut short); *cp receives the code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
        unsigned char c = s[0];
        size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 &&
                c <= 0xf4 ? 4 : 0;
        uint32_t v = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;

        if (!len || len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                v = v << 6 | (s[i] & 0x3f);
        }
        if ((len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
            (len == 4 && (v < 0x10000 || v > 0x10ffff)))
                return 0;
        *cp = v;
        return len;
}

static bool human_unsafe(uint32_t cp, unsigned flags)
{
        if (cp == '\n' || cp == '\t')
                return !(flags & HUMAN_KEEP_LINES);
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069);
}

static void human_put(FILE *f, unsigned char byte, uint32_t cp, bool valid)
{
        if (!valid)
                fprintf(f, "\\x%02x", byte);
        else if (cp == '\n' || cp == '\t' || cp == '\r')
                fprintf(f, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
        else if (cp < 0x80)
                fprintf(f, "\\x%02x", (unsigned)cp);
        else
                fprintf(f, "\\u%04x", (unsigned)cp);
}

void human_write(FILE *f, const char *s, size_t n, unsigned flags)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t run = 0; /* bytes that pass, written at once */

        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t len = utf8_seq(p + i, n - i, &cp);
                /* A line's end of text from elsewhere (CR LF) is no control of the line. */
                bool crlf = (flags & HUMAN_KEEP_LINES) && cp == '\r' && i + 1 < n && p[i + 1] == '\n';
                if (len && (crlf || !human_unsafe(cp, flags))) {
                        run += len;
                        i += len;
                        continue;
                }
                fwrite(p + i - run, 1, run, f);
                run = 0;
                human_put(f, p[i], cp, len != 0);
                i += len ? len : 1;
        }
        fwrite(p + n - run, 1, run, f);
}

bool human_plain(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t n = s ? strlen(s) : 0;

        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t len = utf8_seq(p + i, n - i, &cp);
                if (!len || human_unsafe(cp, HUMAN_LINE))
                        return false;
                i += len;
        }
        return true;
}

char *human_escape(const char *s, unsigned flags)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        if (!s)
                s = "";
        if (human_plain(s))
                return xstrdup(s);
        if (!(f = open_memstream(&buf, &len)))
                abort();
        human_write(f, s, strlen(s), flags);
        if (fclose(f) != 0)
                abort();
        return buf;
}

#ifdef TXBOX_TESTING
enum { FP_NONE = -1, FP_KILL, FP_ENOSPC, FP_SEGV, FP_ABORT, FP_HANG, FP_FULL };
static struct {
        char name[32];
        long target, count;
        int action;
} fp[4];
static size_t nfp;
static pthread_once_t fp_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;

/* NAME:N[:ACTION][,NAME:N[:ACTION]...] (ACTION: kill, the default, enospc, segv, abort, hang
 * or full), read once: the sweeper thread reaches failpoints too. */
static void fp_load(void)
{
        static const char *const actions[] = {"kill", "enospc", "segv", "abort", "hang", "full"};
        const char *env = getenv("TXBOX_FAILPOINT");
        char buf[256], *save = NULL;

        if (!env || strlen(env) >= sizeof(buf))
                return;
        strcpy(buf, env);
        for (char *spec = strtok_r(buf, ",", &save); spec && nfp < ARRAY_SIZE(fp);
             spec = strtok_r(NULL, ",", &save)) {
                char *s2 = NULL, *n = strtok_r(spec, ":", &s2), *k = strtok_r(NULL, ":", &s2);
                char *a = strtok_r(NULL, ":", &s2);
                if (!n || !k || strlen(n) >= sizeof(fp[0].name))
                        continue;
                strcpy(fp[nfp].name, n);
                fp[nfp].target = strtol(k, NULL, 10);
                fp[nfp].action = FP_KILL;
                for (int i = 0; a && i < (int)ARRAY_SIZE(actions); i++)
                        if (!strcmp(a, actions[i]))
                                fp[nfp].action = i;
                nfp++;
        }
}

/* The action due at this passage of failpoint NAME (FP_NONE: none); counts it. */
static int fp_due(const char *name)
{
        int act = FP_NONE;

        pthread_mutex_lock(&fp_lock);
        for (size_t i = 0; i < nfp && act == FP_NONE; i++) {
                if (strcmp(name, fp[i].name) != 0)
                        continue;
                if (fp[i].action == FP_FULL)
                        act = fp[i].count++ >= fp[i].target ? FP_ENOSPC : FP_NONE; /* stays full */
                else if (fp[i].count++ == fp[i].target)
                        act = fp[i].action;
        }
        pthread_mutex_unlock(&fp_lock);
        return act;
}

void failpoint_set_count(const char *name, long count)
{
        pthread_once(&fp_once, fp_load);
        pthread_mutex_lock(&fp_lock);
        for (size_t i = 0; i < nfp; i++)
                if (!strcmp(name, fp[i].name))
                        fp[i].count = count;
        pthread_mutex_unlock(&fp_lock);
}

int failpoint(const char *name)
{
        pthread_once(&fp_once, fp_load);
        switch (fp_due(name)) {
        case FP_NONE:
                return 0;
        case FP_ENOSPC:
                return -ENOSPC; /* the step fails as on a full disk */
        case FP_SEGV:
                raise(SIGSEGV); /* as a bug would */
                break;
        case FP_ABORT:
                abort(); /* as xmalloc does when memory runs out */
        case FP_HANG:
                for (;;)
                        pause();
        }
        /* A test asked for a crash here: die as a power cut or OOM kill would. */
        kill(getpid(), SIGKILL);
        _exit(137);
}
#endif

void human_size(uint64_t bytes, char *buf, size_t size)
{
        static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = (double)bytes;
        size_t i = 0;

        while (v >= 1024 && i + 1 < ARRAY_SIZE(u)) {
                v /= 1024;
                i++;
        }
        snprintf(buf, size, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}
