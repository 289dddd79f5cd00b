/* renamebench: what a rename costs the program, timed inside it (txbox's own start and
 * commit do not count).  Usage:
 *   renamebench file N     rename a file back and forth N times: us per rename
 *   renamebench newdir N   the same with a directory it made itself: us per rename
 *   renamebench dir OLD NEW  one rename of the directory OLD: ms, or the error
 * bench/rename.sh runs it through two txbox binaries side by side. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int loop(const char *a, const char *b, long n)
{
        double t0 = now_us();
        for (long i = 0; i < n; i++)
                if (rename(a, b) < 0 || rename(b, a) < 0) {
                        printf("error: %s\n", strerror(errno));
                        return 1;
                }
        printf("%.3f\n", (now_us() - t0) / (2.0 * (double)n));
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 3 && !strcmp(argv[1], "file")) {
                int fd = open("rb.a", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                if (fd < 0)
                        return 1;
                close(fd);
                return loop("rb.a", "rb.b", atol(argv[2]));
        }
        if (argc == 3 && !strcmp(argv[1], "newdir")) {
                if (mkdir("rb.d", 0755) < 0)
                        return 1;
                return loop("rb.d", "rb.e", atol(argv[2]));
        }
        if (argc == 4 && !strcmp(argv[1], "dir")) {
                double t0 = now_us();
                if (rename(argv[2], argv[3]) < 0) {
                        printf("%s\n", strerror(errno));
                        return 0;
                }
                printf("%.3f\n", (now_us() - t0) / 1000.0);
                return 0;
        }
        fprintf(stderr, "usage: renamebench file|newdir N | dir OLD NEW\n");
        return 2;
}
