/* Arrays of strings. */
#include "base/strv.h"

#include <string.h>

#include "base/mem.h"

size_t strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

char **strv_dup(char *const *v)
{
        size_t n = strv_len(v);
        char **r = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                r[i] = xstrdup(v[i]);
        return r;
}

void strvec_push(struct strvec *sv, char *s)
{
        if (sv->n + 2 > sv->cap) {
                sv->cap = sv->cap ? sv->cap * 2 : 8;
                sv->v = xrealloc(sv->v, sv->cap * sizeof(char *));
        }
        sv->v[sv->n++] = s;
        sv->v[sv->n] = NULL;
}

bool strvec_lists_path(const struct strvec *sv, const char *path)
{
        size_t n = strlen(path);
        for (size_t i = 0; i < sv->n; i++)
                if (!strncmp(sv->v[i], path, n) && sv->v[i][n] == ' ')
                        return true;
        return false;
}

void strvec_clear(struct strvec *sv)
{
        for (size_t i = 0; i < sv->n; i++)
                free(sv->v[i]);
        free(sv->v);
        memset(sv, 0, sizeof(*sv));
}
