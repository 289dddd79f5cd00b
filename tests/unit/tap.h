/* Minimal TAP producer for the C unit tests. */
#ifndef TXBOX_TAP_H
#define TXBOX_TAP_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                              \
        do {                                                                       \
                int ok_c_ = !!(cond);                                              \
                tap_n++;                                                           \
                if (!ok_c_)                                                        \
                        tap_failed++;                                              \
                printf("%sok %d - ", ok_c_ ? "" : "not ", tap_n);                  \
                printf(__VA_ARGS__);                                               \
                printf("\n");                                                      \
                if (!ok_c_)                                                        \
                        printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
                fflush(stdout);                                                    \
        } while (0)

#define is_int(a, b, ...)                                                          \
        do {                                                                       \
                long long is_a_ = (long long)(a), is_b_ = (long long)(b);          \
                ok(is_a_ == is_b_, __VA_ARGS__);                                   \
                if (is_a_ != is_b_)                                                \
                        printf("#   got %lld, expected %lld\n", is_a_, is_b_);      \
        } while (0)

#define is_str(a, b, ...)                                                          \
        do {                                                                       \
                const char *is_a_ = (a), *is_b_ = (b);                             \
                int eq_ = is_a_ && is_b_ ? !strcmp(is_a_, is_b_) : is_a_ == is_b_; \
                ok(eq_, __VA_ARGS__);                                              \
                if (!eq_)                                                          \
                        printf("#   got '%s', expected '%s'\n", is_a_ ? is_a_ : "(null)", \
                               is_b_ ? is_b_ : "(null)");                          \
        } while (0)

/* Remove a test's own temp dir, whatever the sandbox left in it (the overlay's work/work has
 * mode 000, which rm alone cannot enter unprivileged). */
static inline void tap_rmtree(const char *dir)
{
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "chmod -R u+rwX '%s'; rm -rf '%s'", dir, dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
}

static inline int tap_done(void)
{
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
/* tap_mkdtemp(buf, size, name): a fresh directory $TMPDIR/name.XXXXXX, or under /var/tmp when
 * TMPDIR is unset (usually on disk: an overlay's upper layer needs user xattrs, which tmpfs
 * has only since Linux 6.6).  NULL when it cannot be made. */
static inline char *tap_mkdtemp(char *buf, size_t size, const char *name)
{
        const char *t = getenv("TMPDIR");

        if (!t || !*t)
                t = "/var/tmp";
        int n = snprintf(buf, size, "%s/%s.XXXXXX", t, name);
        if (n < 0 || (size_t)n >= size)
                return NULL;
        return mkdtemp(buf);
}

/* tap_workspace(dir, size, name, ws, ws_size): tap_mkdtemp(dir) holding an empty workspace
 * dir/ws (its path in ws) and a home dir/home that HOME points at, so the default state dir
 * lands in the test's own directory.  false when it cannot be made. */
static inline bool tap_workspace(char *dir, size_t size, const char *name, char *ws, size_t ws_size)
{
        char home[512];

        if (!tap_mkdtemp(dir, size, name))
                return false;
        snprintf(ws, ws_size, "%s/ws", dir);
        snprintf(home, sizeof(home), "%s/home", dir);
        if (mkdir(ws, 0755) < 0 || mkdir(home, 0755) < 0)
                return false;
        setenv("HOME", home, 1);
        return true;
}

#endif
