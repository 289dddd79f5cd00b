/* peakrss.so: make bench preloads it (LD_PRELOAD) into txbox to learn the peak memory of the
 * supervisor process alone.  /usr/bin/time reports the largest of a process and all the
 * descendants it waited for (ru_maxrss of wait4), which for txbox includes the sandbox's
 * init and the program.  At exit, a process named txbox appends
 *   "PID VmHWM_kB ru_maxrss_kB"
 * to the file $PEAKRSS_OUT.  Processes in the sandbox that inherit LD_PRELOAD cannot write
 * there (the host is read-only) and are not named txbox anyway.
 *   cc -O2 -shared -fPIC -o peakrss.so bench/peakrss.c */
#define _GNU_SOURCE
#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static long vm_hwm_kb(void)
{
        char line[256];
        long kb = -1;
        FILE *f = fopen("/proc/self/status", "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
                        break;
        fclose(f);
        return kb;
}

__attribute__((destructor)) static void peakrss_report(void)
{
        const char *out = getenv("PEAKRSS_OUT");
        struct rusage ru;
        if (!out || strcmp(program_invocation_short_name, "txbox") != 0 || getrusage(RUSAGE_SELF, &ru) < 0)
                return;
        FILE *f = fopen(out, "ae");
        if (!f)
                return;
        fprintf(f, "%d %ld %ld\n", (int)getpid(), vm_hwm_kb(), ru.ru_maxrss);
        fclose(f);
}
