/* abrun: time commands side by side, alternating A B C A B C ..., and print the median
 * of each with its ratio to the first (the baseline).  Usage:
 *   abrun [-w WARMUPS] [-t TSV] [-r RAW] [-q] N [--prep=CMD] 'NAME=CMD' [--prep=CMD] 'NAME=CMD' ...
 * Each CMD runs through /bin/sh -c.  --prep=CMD applies to the case after it: CMD runs,
 * untimed, before every run of that case (to put the workspace back as it was).  Every
 * command sees ABRUN_RUN (0 in warm-up runs, else 1..N) and ABRUN_CASE (0, 1, ...) in its
 * environment, so that it can keep per-run output apart.  -w: warm-up runs of each case
 * (default 1); -t: also append "name<TAB>median<TAB>min<TAB>max<TAB>n" lines (ms) to TSV;
 * -r: append every sample as "name<TAB>run<TAB>ms" to RAW (for ratios of the pairs run one
 * after the other); -q: no markdown table.  Alternating in one process keeps machine noise from favouring
 * one side. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct abcase {
        char *name;
        const char *cmd;
        const char *prep; /* NULL: none */
        double *t;        /* N samples, sorted once all have run */
};

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

/* Milliseconds the command took, or -1 when it failed. */
static double run_once(const char *cmd)
{
        char *argv[] = {"sh", "-c", (char *)cmd, NULL};
        pid_t pid;
        int st;
        double t0 = now_ms();
        if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0)
                return -1;
        if (waitpid(pid, &st, 0) < 0)
                return -1;
        double t = now_ms() - t0;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

/* One run of case j: its preparation untimed, then the command timed. */
static double run_case(const struct abcase *c, int j, int run)
{
        char buf[16];
        snprintf(buf, sizeof(buf), "%d", run);
        setenv("ABRUN_RUN", buf, 1);
        snprintf(buf, sizeof(buf), "%d", j);
        setenv("ABRUN_CASE", buf, 1);
        if (c->prep && run_once(c->prep) < 0) {
                fprintf(stderr, "abrun: preparation of '%s' failed: %s\n", c->name, c->prep);
                return -1;
        }
        double t = run_once(c->cmd);
        if (t < 0)
                fprintf(stderr, "abrun: '%s' failed: %s\n", c->name, c->cmd);
        return t;
}

/* Cases from the arguments after N; returns how many, or -1 on a malformed one. */
static int parse_cases(int argc, char **argv, struct abcase *cs, int n)
{
        const char *prep = NULL;
        int k = 0;
        for (int i = 0; i < argc; i++) {
                if (!strncmp(argv[i], "--prep=", 7)) {
                        prep = argv[i] + 7;
                        continue;
                }
                char *eq = strchr(argv[i], '=');
                if (!eq)
                        return -1;
                cs[k] = (struct abcase){.name = strndup(argv[i], (size_t)(eq - argv[i])), .cmd = eq + 1,
                                        .prep = prep, .t = calloc((size_t)n, sizeof(double))};
                if (!cs[k].name || !cs[k].t)
                        return -1;
                prep = NULL;
                k++;
        }
        return k;
}

static double median(const double *t, int n)
{
        return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static void report(struct abcase *cs, int k, int n, FILE *tsv, int table)
{
        double base = 0;
        if (table)
                printf("| case | median ms | min ms | ratio to %s |\n|---|---:|---:|---:|\n", cs[0].name);
        for (int j = 0; j < k; j++) {
                qsort(cs[j].t, (size_t)n, sizeof(double), cmp);
                double med = median(cs[j].t, n);
                if (j == 0)
                        base = med;
                if (table)
                        printf("| %s | %.2f | %.2f | %.2f |\n", cs[j].name, med, cs[j].t[0], med / base);
                if (tsv)
                        fprintf(tsv, "%s\t%.2f\t%.2f\t%.2f\t%d\n", cs[j].name, med, cs[j].t[0], cs[j].t[n - 1], n);
        }
}

static int usage(void)
{
        fprintf(stderr, "usage: abrun [-w WARMUPS] [-t TSV] [-r RAW] [-q] N [--prep=CMD] 'NAME=CMD' ...\n");
        return 2;
}

int main(int argc, char **argv)
{
        int warm = 1, table = 1, opt;
        FILE *tsv = NULL, *raw = NULL;
        while ((opt = getopt(argc, argv, "+w:t:r:q")) != -1) {
                if (opt == 'w')
                        warm = atoi(optarg);
                else if (opt == 't' && !(tsv = fopen(optarg, "a")))
                        return perror(optarg), 2;
                else if (opt == 'r' && !(raw = fopen(optarg, "a")))
                        return perror(optarg), 2;
                else if (opt == 'q')
                        table = 0;
                else if (opt != 't' && opt != 'r')
                        return usage();
        }
        if (argc - optind < 2)
                return usage();
        int n = atoi(argv[optind]);
        struct abcase *cs = calloc((size_t)(argc - optind), sizeof(*cs));
        int k = cs && n > 0 ? parse_cases(argc - optind - 1, argv + optind + 1, cs, n) : -1;
        if (k <= 0)
                return usage();
        for (int w = 0; w < warm; w++) /* warm caches */
                for (int j = 0; j < k; j++)
                        if (run_case(&cs[j], j, 0) < 0)
                                return 1;
        for (int i = 0; i < n; i++)
                for (int j = 0; j < k; j++) {
                        if ((cs[j].t[i] = run_case(&cs[j], j, i + 1)) < 0)
                                return 1;
                        if (raw)
                                fprintf(raw, "%s\t%d\t%.2f\n", cs[j].name, i + 1, cs[j].t[i]);
                }
        report(cs, k, n, tsv, table);
        return (tsv && fclose(tsv) != 0) || (raw && fclose(raw) != 0) ? 1 : 0;
}
