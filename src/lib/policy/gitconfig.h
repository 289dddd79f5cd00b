/* git's configuration read without running git, as git-config(1) describes its syntax:
 * sections ("[core]"), subsections ("[remote \"origin\"]", case-sensitive, and the old
 * "[section.sub]"), keys (case-insensitive), values (quoting, the escapes \" \\ \n \t \b,
 * comments, a backslash at the end of a line continuing it), a UTF-8 byte-order mark, CRLF
 * lines, and includes (include.path, includeIf.<condition>.path).  Every file is hostile
 * input (a transaction wrote it): read from the view beneath the workspace, bounded in
 * size, entries and include depth; what cannot be read exactly as git would read it is
 * reported (opaque), never guessed.  Used by the effect rules to see what a repository's
 * configuration makes git run (runlater.c). */
#ifndef TXBOX_POLICY_GITCONFIG_H
#define TXBOX_POLICY_GITCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strvec.h"
#include "policy/view.h"

#define GITCFG_MAX_FILE (1u << 20)  /* bytes of one configuration file */
#define GITCFG_MAX_ENTRIES 100000   /* entries over all files of one repository */
#define GITCFG_MAX_DEPTH 10         /* nested includes: git's own limit (it dies beyond) */
#define GITCFG_MAX_FILES 256        /* files read for one repository */

struct gitcfg_entry {
        char *name;  /* "section.subsection.key": section and key lowercased, subsection as written */
        char *value; /* NULL when the key stands alone ("[core] bare": true) */
        const char *file; /* the file it is in (workspace-relative), owned by the gitcfg */
        unsigned line;
};

struct gitcfg {
        struct gitcfg_entry *v; /* in the order git reads them (an include's entries where it is) */
        size_t n, cap;
        struct strvec files;   /* workspace-relative paths read or looked for, and links on the way */
        struct strvec outside; /* includes naming a file outside the workspace: not read */
        char *opaque;          /* why part of it could not be read as git would; NULL when all was */
};

/* Called for every entry of text (name as in gitcfg_entry), in order; a non-zero return
 * stops the parse and is returned. */
typedef int (*gitcfg_fn)(const char *name, const char *value, unsigned line, void *data);
/* Parse text (len bytes; it may hold NULs) as one git configuration file.  0 when all of it
 * was read; -EINVAL on a syntax error git would refuse, with *line (may be NULL) its line;
 * or the callback's non-zero value.  A NUL byte is an error: git's value would end there. */
int gitcfg_parse(const char *text, size_t len, gitcfg_fn fn, void *data, unsigned *line);

/* Read the configuration file rel (workspace-relative) in the view and every file it
 * includes, appending to c.  Includes are followed whatever their condition (any could
 * hold); a relative one from the including file's directory; "~/", "%(prefix)/" and
 * absolute paths outside the workspace are only listed (c->outside).  A file that does not
 * exist adds nothing (as in git) but is listed in c->files. */
void gitcfg_load(struct gitcfg *c, const struct view *v, const char *rel);
void gitcfg_free(struct gitcfg *c);
/* The last value of name in c (NULL when none, or when it stands alone), as git takes it. */
const char *gitcfg_last(const struct gitcfg *c, const char *name);

/* Does this entry make git run a program (or decide which one, or where hooks are)?  NULL
 * when not; else a short description of when git runs it ("at every git status, diff and
 * commit"). */
const char *gitcfg_runs(const char *name, const char *value);

#endif
