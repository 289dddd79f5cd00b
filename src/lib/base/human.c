/* Text for humans: escaping, sizes. */
#define _GNU_SOURCE
#include "base/human.h"

#include <stdlib.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"

/* Length of the UTF-8 sequence at s (1-4), or 0 when it is not valid UTF-8 (overlong,
 * surrogate, beyond U+10FFFF, cut short); *cp receives the code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
        unsigned char c = s[0];
        size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 &&
                c <= 0xf4 ? 4 : 0;
        uint32_t v = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;

        if (!len || len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                v = v << 6 | (s[i] & 0x3f);
        }
        if ((len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
            (len == 4 && (v < 0x10000 || v > 0x10ffff)))
                return 0;
        *cp = v;
        return len;
}

static bool human_unsafe(uint32_t cp, unsigned flags)
{
        if (cp == '\n' || cp == '\t')
                return !(flags & HUMAN_KEEP_LINES);
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069);
}

static void human_put(FILE *f, unsigned char byte, uint32_t cp, bool valid)
{
        if (!valid)
                fprintf(f, "\\x%02x", byte);
        else if (cp == '\n' || cp == '\t' || cp == '\r')
                fprintf(f, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
        else if (cp < 0x80)
                fprintf(f, "\\x%02x", (unsigned)cp);
        else
                fprintf(f, "\\u%04x", (unsigned)cp);
}

void human_write(FILE *f, const char *s, size_t n, unsigned flags)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t run = 0; /* bytes that pass, written at once */

        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t len = utf8_seq(p + i, n - i, &cp);
                /* A line's end of text from elsewhere (CR LF) is no control of the line. */
                bool crlf = (flags & HUMAN_KEEP_LINES) && cp == '\r' && i + 1 < n && p[i + 1] == '\n';
                if (len && (crlf || !human_unsafe(cp, flags))) {
                        run += len;
                        i += len;
                        continue;
                }
                fwrite(p + i - run, 1, run, f);
                run = 0;
                human_put(f, p[i], cp, len != 0);
                i += len ? len : 1;
        }
        fwrite(p + n - run, 1, run, f);
}

bool human_plain(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t n = s ? strlen(s) : 0;

        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t len = utf8_seq(p + i, n - i, &cp);
                if (!len || human_unsafe(cp, HUMAN_LINE))
                        return false;
                i += len;
        }
        return true;
}

char *human_escape(const char *s, unsigned flags)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        if (!s)
                s = "";
        if (human_plain(s))
                return xstrdup(s);
        if (!(f = open_memstream(&buf, &len)))
                abort();
        human_write(f, s, strlen(s), flags);
        if (fclose(f) != 0)
                abort();
        return buf;
}

void human_size(uint64_t bytes, char *buf, size_t size)
{
        static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = (double)bytes;
        size_t i = 0;

        while (v >= 1024 && i + 1 < ARRAY_SIZE(u)) {
                v /= 1024;
                i++;
        }
        snprintf(buf, size, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}
