/* Clocks. */
#include "base/clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

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
