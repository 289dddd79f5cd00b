/* Fuzz target: the shell parser alone (sh_parse.c) and its printer (sh_print.c).  Beyond
 * "no crash, no leak, no hang", it checks what the walker will rely on:
 *   - the tree is well formed: every child and sibling index inside the arena, every node
 *     reached once from the root (no cycle, no sharing), every source span inside the input;
 *   - a string read without error prints as a program that reads back, without error, to
 *     the same print (what bash --pretty-print prints, bash reads the same way: the printer
 *     and the parser agree with each other, and tests/corpus/shparse.sh holds both against
 *     bash). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy/sh_ast.h"

static void check_tree(const struct sh_ast *a, int depth);

/* Say which property failed, then abort (what libFuzzer and the replay report). */
static void fail(const char *why)
{
        fprintf(stderr, "fuzz_ast: %s\n", why);
        abort();
}

/* Every node reachable from k, each once; sub-trees of backquotes checked in turn. */
static void check_node(const struct sh_ast *a, uint32_t k, unsigned char *seen, int depth)
{
        if (k == 0 || k >= a->nn)
                fail("a node index outside the arena");
        if (seen[k])
                fail("a node reached twice");
        seen[k] = 1;
        const struct sh_node *x = &a->nodes[k];
        if ((size_t)x->off + x->len > a->n)
                fail("a node's span ends past the input");
        if (x->kind == SH_BACKTICK) {
                if (x->sub)
                        check_tree(x->sub, depth + 1);
                return;
        }
        for (uint32_t c = x->kid; c; c = a->nodes[c].next)
                check_node(a, c, seen, depth);
}

static void check_tree(const struct sh_ast *a, int depth)
{
        if (depth > SH_MAX_NEST + 2 || a->nn > a->cap || a->nn > SH_MAX_NODES + 1)
                fail("a tree over its limits");
        if (a->err != SH_OK && !a->errmsg[0])
                fail("an error without a message");
        if (a->root == 0 && a->err == SH_ERR_LIMIT) /* the arena was full at once */
                return;
        if (a->root == 0 || a->root >= a->nn || a->nodes[a->root].kind != SH_LIST)
                fail("no list at the root");
        unsigned char *seen = calloc(a->nn, 1);
        if (!seen)
                fail("out of memory");
        check_node(a, a->root, seen, depth);
        free(seen);
}

/* The body of sh_print's "f () \n{ \n" BODY "\n}". */
static char *body_of(const char *p, size_t *n)
{
        static const char head[] = "f () \n{ \n", tail[] = "\n}";
        size_t len = strlen(p);
        if (len < sizeof(head) - 1 + sizeof(tail) - 1 || memcmp(p, head, sizeof(head) - 1) ||
            strcmp(p + len - (sizeof(tail) - 1), tail))
                fail("a print not in declare -f form");
        *n = len - (sizeof(head) - 1) - (sizeof(tail) - 1);
        return strndup(p + sizeof(head) - 1, *n);
}

/* bash's form is ambiguous in five places, where bash itself prints what it reads back
 * otherwise: `<< -x` prints as `<<-x` (<<- with the delimiter x), and `<< <(x)` as
 * `<<<(x)` (a here-string); a ; after a here-document inside $( ) as a newline
 * (semi_after_heredoc); `coproc cmd` as
 * `coproc COPROC cmd` (a simple command takes no name: it reads as the command COPROC);
 * and a command that starts with a redirection keeps the reserved word after it a word
 * (`<f then`), which printed first (`then < f`) is reserved again.  Trees with any of them
 * cannot round-trip. */
static bool reserved_after_redir(const struct sh_ast *a, const struct sh_node *x)
{
        static const char *const rw[] = {"if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
                                         "while", "until", "for", "select", "function", "time", "coproc",
                                         "in", "{", "}", "!", "[[", "]]", NULL};
        if (!x->kid || a->nodes[x->kid].kind != SH_REDIR)
                return false;
        uint32_t w = x->kid;
        while (w && a->nodes[w].kind != SH_WORD)
                w = a->nodes[w].next;
        if (!w)
                return false;
        const struct sh_node *l = &a->nodes[a->nodes[w].kid];
        if (!a->nodes[w].kid || l->kind != SH_LIT)
                return false;
        for (const char *const *r = rw; *r; r++)
                if (l->tlen == strlen(*r) && !memcmp(l->text, *r, l->tlen))
                        return true;
        return false;
}

static bool has_heredoc(const struct sh_ast *a, uint32_t k)
{
        const struct sh_node *x = &a->nodes[k];
        if (x->kind == SH_REDIR && (x->op == SH_R_HEREDOC || x->op == SH_R_HEREDOC_TAB))
                return true;
        if (x->kind == SH_BACKTICK)
                return false;
        for (uint32_t c = x->kid; c; c = a->nodes[c].next)
                if (has_heredoc(a, c))
                        return true;
        return false;
}

/* Inside $( ) or <( ), `a <<E; b` prints as `a <<E` BODY `E` ` b`: b on the line after
 * the body, which reads back as a newline, not a ;. */
static bool semi_after_heredoc(const struct sh_ast *a, uint32_t k, bool sub)
{
        const struct sh_node *x = &a->nodes[k];
        if (x->kind == SH_BACKTICK)
                return false;
        sub = sub || x->kind == SH_CMDSUB || x->kind == SH_PROCSUB;
        bool hd = false; /* a body may wait across a & */
        for (uint32_t c = x->kid; c; c = a->nodes[c].next) {
                hd = hd || (x->kind == SH_LIST && has_heredoc(a, c));
                if (sub && hd && a->nodes[c].op == ';' && a->nodes[c].next)
                        return true;
                if (semi_after_heredoc(a, c, sub))
                        return true;
        }
        return false;
}

static bool bash_ambiguous(const struct sh_ast *a)
{
        if (a->root && semi_after_heredoc(a, a->root, false))
                return true;
        for (uint32_t k = 1; k < a->nn; k++) {
                const struct sh_node *x = &a->nodes[k];
                if (x->kind == SH_COPROC && x->kid && a->nodes[x->kid].kind == SH_SIMPLE)
                        return true;
                if (x->kind == SH_SIMPLE && reserved_after_redir(a, x))
                        return true;
                if (x->kind != SH_REDIR || x->op != SH_R_HEREDOC || !x->kid)
                        continue;
                const struct sh_node *h = &a->nodes[x->kid];
                size_t j = h->off;
                while (j < (size_t)h->off + h->len && strchr("'\"\\", a->src[j]))
                        j++;
                if (j < (size_t)h->off + h->len && a->src[j] == '-')
                        return true;
                if (h->len && a->src[h->off] == '<') /* << <(cmd) prints as <<<(cmd) */
                        return true;
        }
        return false;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 1 << 16)
                return 0;
        struct sh_ast *a = sh_parse((const char *)data, size, 0);
        check_tree(a, 0);
        char *p1 = sh_print(a);
        /* NUL is read as a character but the print is a C string: only NUL-free inputs
         * can round-trip. */
        if (a->err == SH_OK && !memchr(data, 0, size) && !bash_ambiguous(a)) {
                size_t n;
                char *body = body_of(p1, &n);
                struct sh_ast *b = sh_parse(body, n, 0);
                check_tree(b, 0);
                if (b->err != SH_OK)
                        fail("the print of a program does not read back");
                char *p2 = sh_print(b);
                if (strcmp(p1, p2))
                        fail("the print read back prints differently");
                free(p2);
                sh_ast_free(b);
                free(body);
        }
        free(p1);
        sh_ast_free(a);
        return 0;
}
