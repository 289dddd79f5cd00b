/* Fuzz target: bytes as a git configuration file (gitconfig.c), every entry it yields put to
 * the table of keys that run programs.  What the parser accepts must hold: names of a
 * section and a key (lowercase, from git's key characters), values without a NUL. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy/gitconfig.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        return 0;
}

static int check(const char *name, const char *value, unsigned line, void *data)
{
        size_t *n = data;
        const char *dot = strchr(name, '.'), *last = strrchr(name, '.');
        if (!name[0] || line == 0)
                abort();
        /* the key, after the last dot, is lowercase letters, digits and '-', starting with a letter */
        const char *key = last ? last + 1 : name;
        if (!(key[0] >= 'a' && key[0] <= 'z'))
                abort();
        for (const char *p = key; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
                        abort();
        (void)dot;
        (void)gitcfg_runs(name, value);
        (*n)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t n = 0;
        unsigned line = 0;
        int r = gitcfg_parse((const char *)data, size, check, &n, &line);
        if (r != 0 && r != -EINVAL)
                abort();
        if (r == -EINVAL && line == 0)
                abort();
        if (memchr(data, '\0', size) && r == 0)
                abort(); /* a NUL never parses: git would read the value two ways */
        return 0;
}
