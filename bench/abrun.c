/* abrun: time commands side by side, alternating A B C A B C ..., and print the median
 * of each with its ratio to the first (the baseline).  Usage:
 *   abrun N 'NAME=CMD' 'NAME=CMD' ...   (each CMD runs through /bin/sh -c)
 * Alternating in one process keeps machine noise from favouring one side. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double run_once(const char *cmd)
{
        char *argv[] = {"sh", "-c", (char *)cmd, NULL};
        pid_t pid;
        int st;
        double t0 = now_ms();
        if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0)
                return -1;
        waitpid(pid, &st, 0);
        double t = now_ms() - t0;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: abrun N 'NAME=CMD' ...\n");
                return 2;
        }
        int n = atoi(argv[1]), k = argc - 2;
        double *t = calloc((size_t)(n * k), sizeof(double));
        char **name = calloc((size_t)k, sizeof(char *)), **cmd = calloc((size_t)k, sizeof(char *));
        for (int j = 0; j < k; j++) {
                char *eq = strchr(argv[j + 2], '=');
                if (!eq)
                        return 2;
                name[j] = strndup(argv[j + 2], (size_t)(eq - argv[j + 2]));
                cmd[j] = eq + 1;
                run_once(cmd[j]); /* warm caches */
        }
        for (int i = 0; i < n; i++)
                for (int j = 0; j < k; j++)
                        if ((t[j * n + i] = run_once(cmd[j])) < 0) {
                                fprintf(stderr, "abrun: '%s' failed\n", cmd[j]);
                                return 1;
                        }
        double base = 0;
        printf("| case | median ms | min ms | ratio to %s |\n|---|---:|---:|---:|\n", name[0]);
        for (int j = 0; j < k; j++) {
                qsort(t + j * n, (size_t)n, sizeof(double), cmp);
                double med = n % 2 ? t[j * n + n / 2] : (t[j * n + n / 2 - 1] + t[j * n + n / 2]) / 2;
                if (j == 0)
                        base = med;
                printf("| %s | %.2f | %.2f | %.2f |\n", name[j], med, t[j * n], med / base);
        }
        return 0;
}
