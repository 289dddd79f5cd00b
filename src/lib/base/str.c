/* Pure string helpers. */
#include "base/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fput_pct_escaped(FILE *f, const char *s)
{
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c <= 0x20 || c == '%' || c == 0x7f)
                        fprintf(f, "%%%02x", c);
                else
                        fputc(c, f);
        }
}

uint64_t parse_size(const char *s)
{
        char *end;
        uint64_t mult = 1;

        if (!s || *s < '0' || *s > '9')
                return 0;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        switch (*end) {
        case 'k': case 'K': mult = 1ULL << 10; end++; break;
        case 'm': case 'M': mult = 1ULL << 20; end++; break;
        case 'g': case 'G': mult = 1ULL << 30; end++; break;
        default: break;
        }
        return *end || errno == ERANGE || v == 0 || v > UINT64_MAX / mult ? 0 : v * mult;
}

bool str_has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool path_is_within(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 0)
                return true;
        if (strncmp(path, dir, n) != 0)
                return false;
        return path[n] == '\0' || path[n] == '/' || dir[n - 1] == '/';
}
