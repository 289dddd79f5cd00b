/* abrun: time commands side by side, alternating A B C A B C ..., and print the median of
 * each with its ratio to the first (the baseline).  Usage:
 *   abrun [-w WARMUPS] [-t TSV] [-r RAW] [-q] [-c] N [--prep=CMD] 'NAME=CMD' [--prep=CMD] 'NAME=CMD' ...
 * Each CMD runs through /bin/sh -c.  --prep=CMD applies to the case after it: CMD runs,
 * untimed, before every run of that case (to put the workspace back as it was).  Every
 * command sees ABRUN_RUN (0 in warm-up runs, else 1..N) and ABRUN_CASE (0, 1, ...) in its
 * environment, so that it can keep per-run output apart.  -w: warm-up runs of each case
 * (default 1); -t: also append "name<TAB>median<TAB>min<TAB>max<TAB>n<TAB>p95<TAB>cpu median"
 * lines (ms) to TSV; -r: append every sample as "name<TAB>run<TAB>ms<TAB>cpu ms" to RAW (for
 * ratios of the pairs run one after the other); -q: no markdown table; -c: the table gets
 * the p95 and CPU columns.  Alternating in one process keeps machine noise from favouring one
 * side.
 *
 * CPU is the CPU time of the whole process tree of a run, sandboxes included: the kernel's
 * task-clock counted from the exec of the command's shell and inherited by every process it
 * starts (what `perf stat -e task-clock` counts), read once the shell has been reaped; where
 * perf events are not allowed (kernel.perf_event_paranoid > 2), the user and system time of
 * the descendants that were waited for (wait4), which misses a process nobody waits for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct abcase {
        char *name;
        const char *cmd;
        const char *prep; /* NULL: none */
        double *t;        /* N samples, sorted once all have run */
        double *cpu;      /* N samples of CPU ms, sorted too */
};

static int cpu_source; /* 0: unknown yet, 1: task-clock, 2: wait4 rusage */

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

/* A task-clock counter on pid and every process it starts from its next exec, or -1. */
static int task_clock(pid_t pid)
{
        struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
                                    .config = PERF_COUNT_SW_TASK_CLOCK, .disabled = 1, .inherit = 1,
                                    .enable_on_exec = 1, .exclude_kernel = 0};
        int fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) { /* kernel.perf_event_paranoid 2 lets a user count only user time: */
                a.exclude_kernel = 1; /* task-clock is on-CPU time all the same */
                a.exclude_hv = 1;
                fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        }
        return fd;
}

/* Milliseconds the command took (and *cpu, its tree's CPU ms), or -1 when it failed. */
static double run_once(const char *cmd, double *cpu)
{
        int go[2];
        if (pipe2(go, O_CLOEXEC) < 0)
                return -1;
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(127);
                execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
                _exit(127);
        }
        close(go[0]);
        int fd = cpu_source == 2 ? -1 : task_clock(pid);
        if (!cpu_source)
                cpu_source = fd >= 0 ? 1 : 2;
        struct rusage ru;
        int st;
        double t0 = now_ms();
        ssize_t w = write(go[1], "x", 1);
        close(go[1]);
        pid_t r;
        while ((r = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
                ;
        double t = now_ms() - t0;
        uint64_t ns = 0;
        if (fd >= 0) {
                if (read(fd, &ns, sizeof(ns)) != sizeof(ns))
                        ns = 0;
                close(fd);
                *cpu = ns / 1e6;
        } else {
                *cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
        }
        if (w != 1 || r != pid)
                return -1;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

/* One run of case j: its preparation untimed, then the command timed. */
static double run_case(const struct abcase *c, int j, int run, double *cpu)
{
        char buf[16];
        double ignored;
        snprintf(buf, sizeof(buf), "%d", run);
        setenv("ABRUN_RUN", buf, 1);
        snprintf(buf, sizeof(buf), "%d", j);
        setenv("ABRUN_CASE", buf, 1);
        if (c->prep && run_once(c->prep, &ignored) < 0) {
                fprintf(stderr, "abrun: preparation of '%s' failed: %s\n", c->name, c->prep);
                return -1;
        }
        double t = run_once(c->cmd, cpu);
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
                                        .prep = prep, .t = calloc((size_t)n, sizeof(double)),
                                        .cpu = calloc((size_t)n, sizeof(double))};
                if (!cs[k].name || !cs[k].t || !cs[k].cpu)
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

/* The 95th percentile of n sorted samples (nearest rank). */
static double p95(const double *t, int n)
{
        int i = (int)(0.95 * n + 0.999999) - 1;
        return t[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void report(struct abcase *cs, int k, int n, FILE *tsv, int table, int wide)
{
        double base = 0, base95 = 0, basecpu = 0;
        if (table && wide)
                printf("| case | median ms | p95 ms | CPU ms | median / %s | p95 / %s | CPU / %s |\n"
                       "|---|---:|---:|---:|---:|---:|---:|\n",
                       cs[0].name, cs[0].name, cs[0].name);
        else if (table)
                printf("| case | median ms | min ms | ratio to %s |\n|---|---:|---:|---:|\n", cs[0].name);
        for (int j = 0; j < k; j++) {
                qsort(cs[j].t, (size_t)n, sizeof(double), cmp);
                qsort(cs[j].cpu, (size_t)n, sizeof(double), cmp);
                double med = median(cs[j].t, n), q = p95(cs[j].t, n), cpu = median(cs[j].cpu, n);
                if (j == 0)
                        base = med, base95 = q, basecpu = cpu;
                if (table && wide)
                        printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", cs[j].name, med, q, cpu,
                               med / base, q / base95, basecpu > 0 ? cpu / basecpu : 0);
                else if (table)
                        printf("| %s | %.2f | %.2f | %.2f |\n", cs[j].name, med, cs[j].t[0], med / base);
                if (tsv)
                        fprintf(tsv, "%s\t%.2f\t%.2f\t%.2f\t%d\t%.2f\t%.2f\n", cs[j].name, med, cs[j].t[0],
                                cs[j].t[n - 1], n, q, cpu);
        }
        if (table && wide)
                printf("\nCPU: %s of the whole process tree of each run.\n",
                       cpu_source == 1 ? "task-clock (perf events, inherited)"
                                       : "user + system time (wait4)");
}

static int usage(void)
{
        fprintf(stderr,
                "usage: abrun [-w WARMUPS] [-t TSV] [-r RAW] [-q] [-c] N [--prep=CMD] 'NAME=CMD' ...\n");
        return 2;
}

int main(int argc, char **argv)
{
        int warm = 1, table = 1, wide = 0, opt;
        FILE *tsv = NULL, *raw = NULL;
        while ((opt = getopt(argc, argv, "+w:t:r:qc")) != -1) {
                if (opt == 'w')
                        warm = atoi(optarg);
                else if (opt == 't' && !(tsv = fopen(optarg, "a")))
                        return perror(optarg), 2;
                else if (opt == 'r' && !(raw = fopen(optarg, "a")))
                        return perror(optarg), 2;
                else if (opt == 'q')
                        table = 0;
                else if (opt == 'c')
                        wide = 1;
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
        double cpu;
        for (int w = 0; w < warm; w++) /* warm caches */
                for (int j = 0; j < k; j++)
                        if (run_case(&cs[j], j, 0, &cpu) < 0)
                                return 1;
        for (int i = 0; i < n; i++)
                for (int j = 0; j < k; j++) {
                        if ((cs[j].t[i] = run_case(&cs[j], j, i + 1, &cs[j].cpu[i])) < 0)
                                return 1;
                        if (raw)
                                fprintf(raw, "%s\t%d\t%.2f\t%.2f\n", cs[j].name, i + 1, cs[j].t[i],
                                        cs[j].cpu[i]);
                }
        report(cs, k, n, tsv, table, wide);
        return (tsv && fclose(tsv) != 0) || (raw && fclose(raw) != 0) ? 1 : 0;
}
