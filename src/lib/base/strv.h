/* Arrays of strings: NULL-terminated (strv) and growable (strvec). */
#ifndef TXBOX_STRV_H
#define TXBOX_STRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "base/strvec.h"

static inline void strv_free(char **v)
{
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}
static inline void strv_freep(char ***v) { strv_free(*v); }
#define _cleanup_strv_ __attribute__((cleanup(strv_freep)))

char **strv_dup(char *const *v);
size_t strv_len(char *const *v);

/* A growable array of strings (struct strvec, base/strvec.h). */
void strvec_push(struct strvec *sv, char *s); /* takes ownership */
void strvec_clear(struct strvec *sv);
/* True when an entry of sv is "PATH (...)": conflict lists name each path once. */
bool strvec_lists_path(const struct strvec *sv, const char *path);

#endif
