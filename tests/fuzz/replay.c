/* Replay a fuzz target's inputs with a plain main() (no clang, no libFuzzer): every file
 * named on the command line, or in a directory named there, is passed once to
 * LLVMFuzzerTestOneInput.  make check runs it over the committed corpus and crashers, in
 * the plain and the sanitizer build; a crash, a sanitizer report or an abort() in a
 * target's own checks fails it.  Prints TAP: one line per directory or file argument. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double slowest;
static char slowest_name[512];
static char current[512]; /* the input being run, named when it crashes */

static void say_current(void)
{
        char line[600];
        int n = current[0] ? snprintf(line, sizeof(line), "not ok - crashed on %s\n", current)
                           : snprintf(line, sizeof(line), "not ok - failed after the inputs (see the report above)\n");
        if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0) {
                /* nothing more to do */
        }
}

static void on_crash(int sig)
{
        say_current();
        signal(sig, SIG_DFL);
        raise(sig);
}

/* The sanitizers' runtime, when linked in, reports through this before it exits. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static int run_file(int dirfd, const char *name, const char *shown)
{
        int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        uint8_t *buf = malloc((size_t)st.st_size + 1);
        size_t len = 0;
        ssize_t n;
        while (buf && (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
                len += (size_t)n;
        close(fd);
        if (!buf)
                abort();
        snprintf(current, sizeof(current), "%s", shown);
        double t0 = now();
        LLVMFuzzerTestOneInput(buf, len);
        current[0] = 0;
        double dt = now() - t0;
        if (dt > slowest) {
                slowest = dt;
                snprintf(slowest_name, sizeof(slowest_name), "%s", shown);
        }
        free(buf);
        return 1;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every regular file in dir (sorted, so that a failure is reproducible by its name). */
static int run_dir(const char *path)
{
        DIR *d = opendir(path);
        if (!d)
                return -1;
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                names = realloc(names, (n + 1) * sizeof(*names));
                names[n++] = strdup(e->d_name);
        }
        if (n)
                qsort(names, n, sizeof(*names), cmp);
        int count = 0;
        for (size_t i = 0; i < n; i++) {
                char shown[512];
                snprintf(shown, sizeof(shown), "%s/%s", path, names[i]);
                count += run_file(dirfd(d), names[i], shown);
                free(names[i]);
        }
        free(names);
        closedir(d);
        return count;
}

int main(int argc, char **argv)
{
        int tests = 0;
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
                signal(sigs[i], on_crash);
        if (__sanitizer_set_death_callback)
                __sanitizer_set_death_callback(say_current);
        setvbuf(stdout, NULL, _IOLBF, 0);
        LLVMFuzzerInitialize(&argc, &argv);
        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        printf("ok %d - %s # SKIP absent\n", ++tests, argv[i]);
                        continue;
                }
                int n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(AT_FDCWD, argv[i], argv[i]);
                printf("%s %d - replayed %d input%s of %s\n", n < 0 ? "not ok" : "ok", ++tests, n < 0 ? 0 : n,
                       n == 1 ? "" : "s", argv[i]);
        }
        if (slowest > 0)
                printf("# slowest input: %.3f s (%s)\n", slowest, slowest_name);
        printf("1..%d\n", tests);
        return 0;
}
