/* Tracing where a transaction's time goes. */
#include "base/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"

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
