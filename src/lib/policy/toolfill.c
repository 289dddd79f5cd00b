/* Filling the disk, when it can be known before the run: a write with no end (`yes > f`,
 * `cat /dev/zero > f`, `dd if=/dev/urandom of=f` with no count) or of a known size larger
 * than any file a coding task writes at once (`dd bs=1G count=500`, `fallocate -l 500G`,
 * `head -c 100G /dev/zero > f`).  Inside txbox the disk limit stops such a run (and
 * effect-file-size refuses any file over 256 MiB), but only after it has filled the
 * transaction's layer on the host's disk; the agent's own shell has no limit at all.
 *
 * Not judged here: `truncate -s 1T f` and `dd seek=` make a sparse file, which costs no
 * disk until written (effect-file-size refuses committing it); a write into a pipe whose
 * reader ends it (`yes | head -n 5`, `yes | apt-get install x`); loops whose end cannot
 * be known (judged by the disk and file limits at run time). */
#define _GNU_SOURCE
#include "policy/tools.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>

/* More than this in one command is refused: four times the effect rules' file limit,
 * and more than a test image or fixture of a coding task needs. */
#define FILL_LIMIT (1ULL << 30)
/* Commands looked at, back through a pipeline, to tell whether one is fed without end:
 * past it, the run's disk limit judges (a pipeline of 64 filters is nobody's work). */
#define FILL_BUDGET 64

/* Sources that never end. */
static bool endless_dev(const char *p)
{
        return p && (!strcmp(p, "/dev/zero") || !strcmp(p, "/dev/urandom") || !strcmp(p, "/dev/random") ||
                     !strcmp(p, "/dev/full"));
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
        return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* A size as dd, head, fallocate and truncate write it: N[suffix], dd also NxM; K, KiB = 1024,
 * KB, kB = 1000 (up to E), b = 512, c = 1, w = 2.  false when it cannot be read. */
static bool fill_size(const char *s, uint64_t *out)
{
        if (!s || !isdigit((unsigned char)*s))
                return false;
        uint64_t v = 0;
        while (isdigit((unsigned char)*s)) {
                uint64_t d = (uint64_t)(*s++ - '0'), t = mul_sat(v, 10);
                v = t > UINT64_MAX - d ? UINT64_MAX : t + d;
        }
        static const char units[] = "KMGTPE";
        const char *u = *s ? strchr(units, toupper((unsigned char)*s)) : NULL;
        if (u) {
                bool si = s[1] == 'B' && !s[2];
                bool iec = !s[1] || (s[1] == 'i' && s[2] == 'B' && !s[3]);
                if (!si && !iec && s[1] != 'x')
                        return false;
                for (const char *k = units; k <= u; k++)
                        v = mul_sat(v, si ? 1000 : 1024);
                s += !s[1] || s[1] == 'x' ? 1 : si ? 2 : 3;
        } else if (*s == 'b' || *s == 'c' || *s == 'w') {
                v = mul_sat(v, *s == 'b' ? 512 : *s == 'w' ? 2 : 1);
                s++;
        }
        if (*s == 'x') {
                uint64_t w;
                if (!fill_size(s + 1, &w))
                        return false;
                v = mul_sat(v, w);
        } else if (*s) {
                return false;
        }
        *out = v;
        return true;
}

/* Where command idx sends what it writes: a file it may fill (not a pipe, /dev/null or
 * another device: devices are disk-tool's), or NULL. */
static bool fills_path(struct scan *sc, size_t idx, const char *arg)
{
        if (has_unk(arg))
                return true;
        char *p = uw_path(sc, idx, arg);
        bool f = !p || ((strncmp(p, "/dev/", 5) || !strncmp(p, "/dev/shm/", 9)) && strncmp(p, "/proc/", 6) &&
                        strncmp(p, "/sys/", 5));
        free(p);
        return f;
}

static bool is_endless_arg(struct scan *sc, size_t idx, const char *arg)
{
        if (has_unk(arg))
                return false;
        char *p = uw_path(sc, idx, arg);
        bool e = endless_dev(p);
        free(p);
        return e;
}

/* Its standard output goes to the next stage of a pipeline. */
static bool piped_on(struct scan *sc, size_t idx)
{
        const struct scmd *me = &sc->cmds[idx];
        if (me->pipe_id < 0)
                return false;
        for (size_t k = idx + 1; k < sc->n; k++)
                if (sc->cmds[k].pipe_id == me->pipe_id && sc->cmds[k].stage == me->stage + 1)
                        return true;
        return false;
}

static bool endless(struct scan *sc, size_t idx, int depth, int *budget);

/* Its standard input never ends: an endless device read with <, or an earlier stage of its
 * pipeline that never ends. */
static bool endless_stdin(struct scan *sc, size_t idx, int depth, int *budget)
{
        const struct scmd *me = &sc->cmds[idx];
        for (size_t r = 0; r < me->reads.n; r++)
                if (is_endless_arg(sc, idx, me->reads.v[r]))
                        return true;
        if (me->pipe_id < 0 || me->stage == 0 || depth > 8)
                return false;
        /* back from idx: a pipeline's stages are added in order, so the look ends at the
         * stage before the one that feeds it */
        for (size_t k = idx; k-- > 0;) {
                const struct scmd *c = &sc->cmds[k];
                if (c->pipe_id != me->pipe_id)
                        continue;
                if (c->stage < me->stage - 1)
                        break;
                if (c->stage == me->stage - 1 && endless(sc, k, depth + 1, budget))
                        return true;
        }
        return false;
}

/* dd: how much it copies (UINT64_MAX: no end), or 0 when that cannot be known or is the
 * size of a file it reads. */
static uint64_t dd_amount(struct scan *sc, size_t idx, int depth, int *budget)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *in = NULL, *bs = NULL, *ibs = NULL, *count = NULL;
        bool count_bytes = false;
        for (size_t k = 1; k < n; k++) {
                if (!strncmp(a[k], "if=", 3))
                        in = a[k] + 3;
                else if (!strncmp(a[k], "bs=", 3))
                        bs = a[k] + 3;
                else if (!strncmp(a[k], "ibs=", 4))
                        ibs = a[k] + 4;
                else if (!strncmp(a[k], "count=", 6))
                        count = a[k] + 6;
                else if (!strncmp(a[k], "iflag=", 6) && strstr(a[k], "count_bytes"))
                        count_bytes = true;
        }
        bool src_endless = in ? is_endless_arg(sc, idx, in) : endless_stdin(sc, idx, depth, budget);
        uint64_t c, b = 512;
        if (!count)
                return src_endless ? UINT64_MAX : 0;
        if (!fill_size(count, &c) || ((bs || ibs) && !fill_size(bs ? bs : ibs, &b)))
                return 0;
        uint64_t total = count_bytes ? c : mul_sat(c, b);
        /* a file read (if=img) ends at its own size, which no count stretches */
        return src_endless ? total : 0;
}

/* head -c N: N bytes, when given and its input never ends. */
static uint64_t head_amount(struct scan *sc, size_t idx, int depth, int *budget)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *c = NULL;
        bool src = false, operand = false;
        for (size_t k = 1; k < n; k++) {
                if (!strcmp(a[k], "-c") && k + 1 < n)
                        c = a[++k];
                else if (!strncmp(a[k], "-c", 2) && a[k][2])
                        c = a[k] + 2;
                else if (!strncmp(a[k], "--bytes=", 8))
                        c = a[k] + 8;
                else if (!strcmp(a[k], "-n") && k + 1 < n)
                        k++;
                else if (a[k][0] != '-' || !a[k][1]) {
                        operand = true;
                        src |= is_endless_arg(sc, idx, a[k]);
                }
        }
        if (!operand)
                src = endless_stdin(sc, idx, depth, budget);
        uint64_t v;
        if (!src || !c || c[0] == '-' || !fill_size(c, &v))
                return 0;
        return v;
}

/* Filters that pass an endless input on as endless output. */
static bool passes_on(const char *p)
{
        static const char *const f[] = {"cat", "tr", "base64", "base32", "od", "xxd", "hexdump", "hd", "gzip",
                                        "bzip2", "xz", "zstd", "lz4", "fold", "rev", "pv", "tee", "cut", "nl",
                                        "strings", NULL};
        return uw_in(p, f);
}

/* Command idx writes without end, or more than FILL_LIMIT. */
static bool endless(struct scan *sc, size_t idx, int depth, int *budget)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        /* each stage may hold many commands ({ a; b; } | ...): the look back is bounded */
        if (!n || a[0][0] == '@' || has_unk(a[0]) || --*budget < 0)
                return false;
        const char *p = base_name(a[0]);
        /* a command a tool's model made up (tee FILE for sort -o FILE, awk's print > FILE) is
         * no program in the pipeline: its name is not in the text */
        const char *text = sc->cmds[idx].text;
        if (!text || !strstr(text, p))
                return false;
        if (!strcmp(p, "yes"))
                return true;
        if (!strcmp(p, "dd"))
                return dd_amount(sc, idx, depth, budget) > FILL_LIMIT;
        if (!strcmp(p, "head"))
                return head_amount(sc, idx, depth, budget) > FILL_LIMIT;
        if (!passes_on(p))
                return false;
        bool operand = false;
        for (size_t k = 1; k < n; k++)
                if (a[k][0] != '-' || !a[k][1]) {
                        if (is_endless_arg(sc, idx, a[k]))
                                return true;
                        operand = true;
                }
        /* tee's operands are outputs, tr's are sets of characters; the others' are its
         * input in place of stdin */
        return (!operand || !strcmp(p, "tee") || !strcmp(p, "tr")) && endless_stdin(sc, idx, depth, budget);
}

/* fallocate -l LEN: allocates the blocks at once. */
static uint64_t fallocate_len(char **a, size_t n)
{
        const char *l = NULL;
        for (size_t k = 1; k < n; k++) {
                if (!strcmp(a[k], "-d") || !strcmp(a[k], "--dig-holes") || !strcmp(a[k], "-p") ||
                    !strcmp(a[k], "--punch-hole") || !strcmp(a[k], "-c") || !strcmp(a[k], "--collapse-range"))
                        return 0;
                if ((!strcmp(a[k], "-l") || !strcmp(a[k], "--length")) && k + 1 < n)
                        l = a[++k];
                else if (!strncmp(a[k], "-l", 2) && a[k][2])
                        l = a[k] + 2;
                else if (!strncmp(a[k], "--length=", 9))
                        l = a[k] + 9;
        }
        uint64_t v;
        return l && fill_size(l, &v) ? v : 0;
}

/* Where the endless output of command idx lands in a file: its redirections (unless it is
 * piped on), dd's of=, tee's operands. */
static bool lands_in_file(struct scan *sc, size_t idx)
{
        const struct scmd *me = &sc->cmds[idx];
        char **a = me->argv.v;
        const char *p = base_name(a[0]);
        bool to_file = false;
        if (!strcmp(p, "dd")) {
                for (size_t k = 1; k < me->argv.n; k++)
                        if (!strncmp(a[k], "of=", 3))
                                return fills_path(sc, idx, a[k] + 3);
        }
        if (!strcmp(p, "tee"))
                for (size_t k = 1; k < me->argv.n && !to_file; k++)
                        to_file = (a[k][0] != '-' || !a[k][1]) && fills_path(sc, idx, a[k]);
        if (!piped_on(sc, idx))
                for (size_t w = 0; w < me->writes.n && !to_file; w++)
                        to_file = fills_path(sc, idx, me->writes.v[w]);
        return to_file;
}

void tool_fill(struct scan *sc, size_t idx)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        if (!n || a[0][0] == '@' || has_unk(a[0]))
                return;
        if (!strcmp(base_name(a[0]), "fallocate") && fallocate_len(a, n) > FILL_LIMIT)
                return uw_finding(sc, idx, "@disk-fill", "allocates more than 1 GiB at once");
        int budget = FILL_BUDGET;
        if (endless(sc, idx, 0, &budget) && lands_in_file(sc, idx))
                uw_finding(sc, idx, "@disk-fill", "writes without end, or more than 1 GiB, into a file");
}
