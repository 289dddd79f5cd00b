#!/bin/sh
# scripts/checked.sh [--root DIR]: no call on a safety path has its result thrown away.
# The calls below apply a protection (a namespace, a mount, a privilege drop, a limit, a
# seccomp or Landlock filter, death with the parent), make a change durable (syncfs, fsync)
# or keep a channel open (signalfd, the program's hand-over): STYLE.md says a protection that
# cannot be applied stops the run, so each result must be tested.  Flags a call that starts
# a statement (the previous code line ended one) and an `if (...)` whose body is empty but
# for a comment, when its condition calls one of them.  A line that ignores one on purpose
# says why in a comment holding "unchecked:" (today only the process names, prctl(PR_SET_NAME),
# which protect nothing).  Exit 1 with the places.
set -eu
root=.
[ "${1:-}" = --root ] && root=$2
cd "$root"
CALLS='prctl|syncfs|fsync|fdatasync|signalfd|setns|unshare|mount|umount2?|pivot_root|chroot|chdir|fchdir'
CALLS="$CALLS|setresuid|setresgid|setuid|setgid|setgroups|capset|seccomp|landlock_restrict_self|setrlimit"
CALLS="$CALLS|close_range|mount_setattr|die_with_parent|sandbox_send_go|guard_landlock_apply"
find src -name '*.c' | sort | xargs awk -v calls="$CALLS" '
function flag(what) { printf "%s:%d: %s\n", FILENAME, FNR, what; bad = 1 }
FNR == 1 { prev = ";"; empty_if = 0 }
{
        line = $0
        code = line
        sub(/\/\*.*\*\//, "", code); sub(/\/\/.*/, "", code)
        trimmed = code; gsub(/^[ \t]+|[ \t]+$/, "", trimmed)
        re = "^(\\(void\\) *)?(sys_)?(" calls ")\\("
        if (trimmed ~ re && (prev ~ /[;{}:)]$/ || prev ~ /(^|[^a-z_])else$/) && line !~ /unchecked:/)
                flag("result of " trimmed " is not checked")
        if (empty_if == 1) {
                if (trimmed == "}") { if (line_if !~ /unchecked:/) flag_at(file_if, n_if, "empty if around " call_if) ; empty_if = 0 }
                else if (trimmed != "" && trimmed !~ /^\*/ && line !~ /^[ \t]*\/?\*/) empty_if = 0
        }
        if (match(trimmed, "^if \\(.*(sys_)?(" calls ")\\(") && trimmed ~ /\{$/) {
                empty_if = 1; file_if = FILENAME; n_if = FNR; call_if = trimmed; line_if = line
        }
        if (trimmed != "" && line !~ /^[ \t]*(\/\*|\*|\/\/)/) prev = trimmed
}
function flag_at(f, n, what) { printf "%s:%d: %s\n", f, n, what; bad = 1 }
END { exit bad }
'
