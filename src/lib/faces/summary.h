/* What a transaction did, said compactly for a model: the results of the MCP tools, of
 * txbox agent's tools and of the edit hooks carry a venv's 1,672 paths or a generator's
 * 5,000 as counts, the directories they fall in and a few names, within a byte budget,
 * instead of every path (a 5,000-file change was 140 KB of one tool result).  The first
 * line always says what happened: committed, rolled back and why, refused and why. */
#ifndef TXBOX_SUMMARY_H
#define TXBOX_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "txbox.h"

/* Default bytes of a tool result, beyond the command's own output (stdout and stderr have
 * their cap, --output-cap): MCP, txbox agent and the hooks. */
#define SUMMARY_BUDGET 4096
/* Changed paths listed one by one when there are no more than this (else summarised). */
#define SUMMARY_LIST_ALL 10

/* s for a line of text a model (or a terminal) reads: cut at max bytes (0: no cut) on a
 * character's boundary with "..." after it, then escaped as human_escape (HUMAN_LINE) does:
 * a newline in a name cannot start a line of its own.  malloc'd. */
char *summary_escape(const char *s, size_t max);

/* What happened, one line without a newline, malloc'd: "committed tx ID: exit status 0,
 * 5000 changes (5000 added)", "rolled back tx ID: ...", "refused by policy rule R: ...;
 * nothing ran".  status is the txbox run status (-1: not known); why its "txbox:" line, or
 * NULL.  At most about 1 KB. */
char *summary_outcome(const struct txbox_record *rec, int status, const char *why);

/* The changed paths in words: every path when there are SUMMARY_LIST_ALL or fewer, else the
 * counts, the directories that hold most of them and a few names, then "... and N more"
 * followed by more_hint (may be NULL: "show_transaction tx=ID lists them all").  Lines end
 * in newlines; at most about 1.5 KB whatever the paths. */
void summary_changes_text(FILE *f, const struct txbox_record *rec, const char *more_hint);

/* Fit a tool result obj (the record's JSON with what the tool adds) into budget bytes of
 * compact JSON, not counting the strings under the keys in exempt (NULL-terminated, may be
 * NULL: the command's stdout and stderr, capped on their own).  Adds "change_counts"
 * ({"added", "modified", "deleted"}: the real numbers) and "changes_truncated"; when the
 * paths do not fit, the arrays of "changes" keep only the first paths of each kind
 * (changes_truncated true), then long argv strings, message, reason and violations are
 * cut.  budget 0: nothing cut (only the two keys added).  Returns the size it reached. */
size_t summary_fit(json_t *obj, const struct txbox_record *rec, size_t budget, const char *const *exempt);

/* The size of obj as compact JSON, not counting the strings under the keys in exempt. */
size_t summary_json_size(json_t *obj, const char *const *exempt);

#endif
