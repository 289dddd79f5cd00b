/* Memory: allocation that aborts when memory runs out (the library cannot do anything
 * useful then). */
#ifndef TXBOX_MEM_H
#define TXBOX_MEM_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrdup_or_null(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
