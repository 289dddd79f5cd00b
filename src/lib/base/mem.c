/* Memory: allocation that aborts when memory runs out. */
#define _GNU_SOURCE
#include "base/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                abort();
        return p;
}

void *xcalloc(size_t n, size_t m)
{
        void *p = calloc(n ? n : 1, m ? m : 1);
        if (!p)
                abort();
        return p;
}

void *xrealloc(void *p, size_t n)
{
        p = realloc(p, n ? n : 1);
        if (!p)
                abort();
        return p;
}

char *xstrdup(const char *s)
{
        char *p = strdup(s);
        if (!p)
                abort();
        return p;
}

char *xstrdup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

char *xasprintf(const char *fmt, ...)
{
        char *p;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&p, fmt, ap) < 0)
                abort();
        va_end(ap);
        return p;
}
