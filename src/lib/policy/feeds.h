/* Private to the unwrapping (unwrap.c, feeds.c): what feeds a command its code, as
 * feeds.c tells it to unwrap.c's handlers.  What listing.c and tools.c use too
 * (uw_unknown, uw_script_file, printf_text) stays in pol.h. */
#ifndef TXBOX_POLICY_FEEDS_H
#define TXBOX_POLICY_FEEDS_H

#include "policy/pol.h"

/* What feeds a command's stdin.  IN_TEXT: text known (a here-document, echo, cat of one);
 * IN_FILE: a file redirected or cat'ed into it (its path); IN_UNKNOWN: a program's output
 * that cannot be known. */
enum stdin_kind { IN_NONE, IN_TEXT, IN_DOWNLOAD, IN_DECODED, IN_FILE, IN_UNKNOWN };

/* What feeds command idx's stdin; *text: the text (IN_TEXT) or the path (IN_FILE), malloc'd,
 * else NULL. */
enum stdin_kind uw_stdin_of(struct scan *sc, size_t idx, char **text);
/* A shell (lang NULL) or interpreter reading its code from stdin: judge what feeds it. */
void uw_code_from_stdin(struct scan *sc, size_t idx, const char *lang, int depth);
/* Nothing feeds c's stdin: a shell it starts would read from the terminal. */
bool uw_no_input(const struct scmd *c);
/* The text this input last wrote to the absolute path, or NULL. */
const char *uw_text_file(const struct scan *sc, const char *path);
/* After command idx was judged: remember what it wrote that a later command may run. */
void uw_record_outputs(struct scan *sc, size_t idx);

#endif
