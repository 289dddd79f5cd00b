/* Parser driver for tests/corpus/shparse.sh and tests/unit/shparse.sh: reads shell strings
 * separated by NUL bytes on stdin and writes, for each, one line of status ("ok", "syntax"
 * or "limit") and the tree printed in bash's declare -f form (sh_print), ended by a NUL.
 * It only reads and prints the strings; nothing is ever executed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "policy/sh_ast.h"

int main(void)
{
        char *rec = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getdelim(&rec, &cap, 0, stdin)) > 0) {
                if (rec[n - 1] == 0)
                        n--;
                struct sh_ast *a = sh_parse(rec, (size_t)n, 0);
                const char *st = a->err == SH_OK ? "ok" : a->err == SH_ERR_SYNTAX ? "syntax" : "limit";
                char *p = sh_print(a);
                printf("%s\n%s", st, p);
                putchar(0);
                free(p);
                sh_ast_free(a);
        }
        free(rec);
        return ferror(stdout) ? 1 : 0;
}
