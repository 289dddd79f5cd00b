/* rm_rf_at / rm_children (base/rmtree.c): what the trash sweeper and every rollback use to remove
 * a transaction's layers, which a program shaped as it liked: wide, deep past the levels
 * whose descriptors are kept, unreadable, read-only, and with symlinks out of the tree.
 * Everything happens in a fresh directory under $TMPDIR; the symlinks point at a sibling
 * "victim" directory inside it, so a removal that followed one harms only this test. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"
#include "tap.h"
#include "base/beneath.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/rmtree.h"
#include "base/str.h"

static int count_entries(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n;
}

static bool put(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        bool ok = fd >= 0 && write(fd, "x\n", 2) == 2;
        if (fd >= 0)
                close(fd);
        return ok;
}

/* A directory chain n deep beneath dirfd/name, a file at each level. */
static bool deep(int dirfd, const char *name, int n)
{
        int fd = -1;
        bool ok = mkdirat(dirfd, name, 0755) == 0 && (fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY)) >= 0;

        for (int i = 0; ok && i < n; i++) {
                ok = put(fd, "f") && mkdirat(fd, "d", 0755) == 0;
                int next = ok ? openat(fd, "d", O_RDONLY | O_DIRECTORY) : -1;
                close(fd);
                fd = next;
                ok = ok && fd >= 0;
        }
        if (fd >= 0)
                close(fd);
        return ok;
}

static bool make_tree(int top)
{
        char name[32];
        int t, w, u, r;
        bool ok = mkdirat(top, "t", 0755) == 0 && (t = openat(top, "t", O_RDONLY | O_DIRECTORY)) >= 0;

        if (!ok)
                return false;
        ok = ok && mkdirat(t, "wide", 0755) == 0 && (w = openat(t, "wide", O_RDONLY | O_DIRECTORY)) >= 0;
        for (int i = 0; ok && i < 300; i++) {
                snprintf(name, sizeof(name), "d%d", i);
                int d;
                ok = mkdirat(w, name, 0755) == 0 && (d = openat(w, name, O_RDONLY | O_DIRECTORY)) >= 0;
                ok = ok && put(d, "a") && put(d, "b");
                if (ok)
                        close(d);
                snprintf(name, sizeof(name), "f%d", i);
                ok = ok && put(w, name);
        }
        ok = ok && deep(t, "deep", 1000);
        /* As overlay leaves work/work: mode 000 around a directory. */
        ok = ok && mkdirat(t, "unreadable", 0755) == 0 &&
             (u = openat(t, "unreadable", O_RDONLY | O_DIRECTORY)) >= 0 && mkdirat(u, "work", 0755) == 0 &&
             put(u, "dirty") && fchmod(u, 0) == 0;
        ok = ok && mkdirat(t, "readonly", 0755) == 0 &&
             (r = openat(t, "readonly", O_RDONLY | O_DIRECTORY)) >= 0 && put(r, "kept") &&
             fchmod(r, 0555) == 0;
        ok = ok && symlinkat("../victim", t, "to-victim") == 0 &&
             symlinkat("../victim/file", t, "to-file") == 0;
        return ok;
}

/* SHA-256 against FIPS 180-4's examples and sha256sum(1) at the padding boundaries. */
static void test_sha256(void)
{
        char hex[65], want[80], cmd[128];
        static const struct {
                const char *in, *out;
        } v[] = {
                {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
                {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
                {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
                sha256_hex(v[i].in, strlen(v[i].in), hex);
                is_str(hex, v[i].out, "sha256 of a %zu-byte example", strlen(v[i].in));
        }
        char *m = xmalloc(1000000);
        memset(m, 'a', 1000000);
        sha256_hex(m, 1000000, hex);
        is_str(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
               "sha256 of a million a");
        for (size_t n = 54; n <= 130; n += n == 57 ? 5 : n == 66 ? 52 : 1) {
                snprintf(cmd, sizeof(cmd), "head -c %zu /dev/zero | tr '\\0' a | sha256sum", n);
                FILE *f = popen(cmd, "r");
                bool got = f && fgets(want, sizeof(want), f);
                if (f)
                        pclose(f);
                sha256_hex(m, n, hex);
                ok(got && !strncmp(hex, want, 64), "sha256 of %zu bytes agrees with sha256sum", n);
        }
        free(m);
}

/* The beneath helpers: never through a symlink, never a fifo opened. */
static void test_beneath(int top)
{
        char *text = NULL;
        struct stat st;
        const char *base;
        int fd;

        ok(mkdirat(top, "b", 0755) == 0 && mkdirat(top, "b/d", 0755) == 0 &&
           put(openat(top, "b/d", O_RDONLY | O_DIRECTORY), "f") &&
                   symlinkat("d", top, "b/ld") == 0 && symlinkat("d/f", top, "b/lf") == 0 &&
                   symlinkat("../victim", top, "b/out") == 0 && mkfifoat(top, "b/fifo", 0644) == 0,
           "a tree with links in and out and a fifo");
        int b = openat(top, "b", O_PATH | O_DIRECTORY | O_CLOEXEC);
        is_int(read_beneath(b, "d/f", 100, &text, NULL), 0, "read_beneath reads a plain file");
        is_str(text ? text : "", "x\n", "... its content");
        free(text);
        is_int(read_beneath(b, "ld/f", 100, &text, NULL), -ELOOP, "... not through a link to a directory");
        is_int(read_beneath(b, "lf", 100, &text, NULL), -ELOOP, "... not a link to a file");
        is_int(read_beneath(b, "out/file", 100, &text, NULL), -ELOOP, "... not through a link out");
        is_int(read_beneath(b, "../victim/file", 100, &text, NULL), -EXDEV, "... not up and out");
        is_int(read_beneath(b, "fifo", 100, &text, NULL), -EINVAL, "... and never opens a fifo");
        is_int(read_beneath(b, "d", 100, &text, NULL), -EINVAL, "... nor a directory");
        is_int(read_beneath(b, "d/f", 1, &text, NULL), -EFBIG, "... and stops at its limit");
        ok(lstat_beneath(b, "lf", &st) == 0 && S_ISLNK(st.st_mode), "lstat_beneath sees the link itself");
        is_int(lstat_beneath(b, "ld/f", &st), -ELOOP, "... and refuses one on the way");
        fd = make_parent_beneath(b, "new/deeper/x", 0700, &base);
        ok(fd >= 0 && !strcmp(base, "x") && fstatat(b, "new/deeper", &st, 0) == 0,
           "make_parent_beneath makes the parents");
        if (fd >= 0)
                close(fd);
        is_int(make_parent_beneath(b, "out/made/x", 0700, &base), -ELOOP, "... never through a link");
        ok(fstatat(top, "victim/made", &st, AT_SYMLINK_NOFOLLOW) < 0, "... and made nothing where it leads");
        close(b);
}

static void escaped(const char *in, unsigned flags, const char *want, const char *what)
{
        char *got = human_escape(in, flags);
        is_str(got, want, "%s", what);
        free(got);
}

static void test_human(void)
{
        escaped("plain name/ä € 😀", HUMAN_LINE, "plain name/ä € 😀", "printable UTF-8 passes");
        escaped("a\033]0;t\007b", HUMAN_LINE, "a\\x1b]0;t\\x07b", "ESC and BEL are shown");
        escaped("l1\nl2\tx\r", HUMAN_LINE, "l1\\nl2\\tx\\r", "one line stays one line");
        escaped("l1\nl2\tx\r\ny\rz", HUMAN_KEEP_LINES, "l1\nl2\tx\r\ny\\rz",
                "text keeps its lines (and CR LF), not a lone CR");
        escaped("\x7f\xc2\x9b\xe2\x80\xae", HUMAN_LINE, "\\x7f\\u009b\\u202e",
                "DEL, C1 CSI, a bidi override");
        escaped("\xff\xc0\x80\xed\xa0\x80ok", HUMAN_LINE, "\\xff\\xc0\\x80\\xed\\xa0\\x80ok",
                "bytes that are not UTF-8");
        escaped("\xe2\x82", HUMAN_LINE, "\\xe2\\x82", "a sequence cut short");
        ok(human_plain("ok") && !human_plain("\033"), "human_plain tells them apart");
}

/* thread_start: the new thread blocks every termination signal, whatever the caller's mask
 * (a thread that did not would take a SIGTERM meant for txbox's signalfd, and die of it). */
static void *mask_of(void *arg)
{
        pthread_sigmask(SIG_BLOCK, NULL, (sigset_t *)arg);
        return NULL;
}

static void test_thread_start(void)
{
        sigset_t none, got, old;
        pthread_t t;

        sigemptyset(&none);
        sigemptyset(&got);
        pthread_sigmask(SIG_SETMASK, &none, &old);
        is_int(thread_start(&t, mask_of, &got), 0, "thread_start starts a thread");
        pthread_join(t, NULL);
        ok(sigismember(&got, SIGTERM) && sigismember(&got, SIGINT) && sigismember(&got, SIGHUP) &&
           sigismember(&got, SIGQUIT), "its thread blocks SIGTERM, SIGINT, SIGHUP and SIGQUIT");
        sigset_t now;
        pthread_sigmask(SIG_BLOCK, NULL, &now);
        ok(!sigismember(&now, SIGTERM), "the caller's own mask is as it was");
        pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void test_pct_escaped(void)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        fput_pct_escaped(f, "a b%c\n\x7f\x01/\xc3\xa9");
        fclose(f);
        is_str(buf, "a%20b%25c%0a%7f%01/\xc3\xa9",
               "fput_pct_escaped: space, %%, newline, DEL, controls escaped");
        free(buf);
}

static void test_parse_size(void)
{
        static const struct {
                const char *in;
                uint64_t want;
        } cases[] = {
                {"1", 1}, {"64K", 64ull << 10}, {"1m", 1ull << 20}, {"3G", 3ull << 30},
                {"17179869183G", 17179869183ull << 30}, /* the largest that fits */
                {"17179869184G", 0},                   /* wraps to 0 past it: refused */
                {"18446744073709551615", UINT64_MAX}, {"18446744073709551616", 0}, /* ERANGE */
                {"0", 0}, {"", 0}, {"-1", 0}, {" 5", 0}, {"+5", 0}, {"5X", 0}, {"5KB", 0}, {"K", 0},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                ok(parse_size(cases[i].in) == cases[i].want, "parse_size(\"%s\") = %llu", cases[i].in,
                   (unsigned long long)cases[i].want);
        ok(parse_size(NULL) == 0, "parse_size(NULL) = 0");
}

int main(void)
{
        char dir[200];

        if (!tap_mkdtemp(dir, sizeof(dir), "txbox-test-util")) {
                printf("1..0 # SKIP cannot make a temp dir\n");
                return 0;
        }
        int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ok(top >= 0 && mkdirat(top, "victim", 0755) == 0 &&
                   put(openat(top, "victim", O_RDONLY | O_DIRECTORY), "file"),
           "a victim directory outside the tree");
        ok(make_tree(top),
           "a tree 300 wide, 1,000 deep, with unreadable and read-only directories and symlinks out");

        is_int(rm_rf_at(top, "t"), 0, "rm_rf_at removes it");
        struct stat st;
        ok(fstatat(top, "t", &st, AT_SYMLINK_NOFOLLOW) < 0, "the tree is gone");
        ok(fstatat(top, "victim/file", &st, 0) == 0, "what its symlinks pointed at is untouched");
        is_int(rm_rf_at(top, "t"), 0, "removing what is not there is no error");

        int keep = -1;
        ok(mkdirat(top, "keep", 0700) == 0 && (keep = openat(top, "keep", O_RDONLY | O_DIRECTORY)) >= 0 &&
           put(keep, "one") && deep(keep, "two", 200) && symlinkat("../victim", keep, "three") == 0,
           "a directory with a file, a 200-deep chain and a symlink");
        is_int(rm_children(keep), 0, "rm_children empties it");
        is_int(count_entries(keep), 0, "nothing is left in it");
        ok(fstatat(top, "keep", &st, 0) == 0 && S_ISDIR(st.st_mode), "and it stays");
        ok(fstatat(top, "victim/file", &st, 0) == 0, "the victim is still untouched");
        is_int(rm_children(keep), 0, "emptying an empty directory succeeds");

        test_beneath(top);
        test_sha256();
        test_human();
        test_thread_start();
        test_pct_escaped();
        test_parse_size();
        close(keep);
        close(top);
        tap_rmtree(dir);
        return tap_done();
}
