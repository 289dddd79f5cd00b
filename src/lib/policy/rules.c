/* The built-in rules.  Each one names what it prevents and what to do instead, because the
 * reader of a refusal is an agent that will retry: the reason must say how to succeed.
 * Order matters within a command (first match decides): deny rules come before ask rules. */
#define _GNU_SOURCE
#include "pol.h"

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define DENY POLICY_DENY
/* The rule guards only the workspace and its repository: a well-known tool's own internal
 * step (git stash's git reset --hard, git gc's reflog expire, a make recipe) is judged by
 * its effects instead (docs/DESIGN.md, "What is judged at exec"). */
#define WS_ONLY .workspace_scope = true,
#define ASK POLICY_ASK

static const char R_RM_ROOT[] =
        "recursive deletion of /, the home directory or the whole workspace destroys everything in it; "
        "delete only the specific subdirectory you mean (e.g. rm -rf build/)";
static const char R_DEL_SYS[] =
        "deleting files outside the workspace (system paths) can break the machine; "
        "only delete inside the workspace or /tmp";
static const char R_GITDIR[] =
        "deleting .git (or its objects, refs or HEAD) destroys the repository's history; "
        "remove only the files you mean, and use git commands to change the repository";
static const char R_SECRET[] =
        "this reads or sends credentials (SSH/GPG keys, cloud tokens, .env files, /etc/shadow, /etc/passwd); "
        "ask the user for the value you need instead of reading the file";
static const char R_PERSIST[] =
        "writing shell startup files, authorized_keys, cron or systemd units makes a change persist "
        "beyond this task; put the setting in the project (e.g. a script or .envrc) and tell the user";
static const char R_WRITE_SYS[] =
        "this overwrites files or devices outside the workspace; write inside the workspace or /tmp";
static const char R_DISK[] =
        "disk and device tools (mkfs, fdisk, dd to a device, wipefs ...) destroy file systems; "
        "this is never needed for a coding task";
static const char R_CHMOD[] =
        "changing permissions or ownership of /, system paths, the home directory or the whole workspace "
        "recursively is hard to undo; change only the files that need it (e.g. chmod +x script.sh)";
static const char R_SETUID[] =
        "setuid/setgid bits let a program run with its owner's privileges; use ordinary permissions";
static const char R_RESET[] =
        "git reset --hard discards uncommitted work; use git stash, or git reset --soft/--mixed";
static const char R_CLEAN[] =
        "git clean -f deletes untracked files for good; run git clean -n to see what it would delete "
        "and remove specific files instead";
static const char R_PUSHF[] =
        "a forced push rewrites shared history; push a new branch instead (or use --force-with-lease "
        "on your own branch after asking)";
static const char R_PUSHD[] =
        "deleting a remote branch or tag affects everyone using it; ask the user to do it";
static const char R_BRANCHD[] =
        "git branch -D deletes a branch even when its commits are not merged; use git branch -d";
static const char R_HIST[] =
        "rewriting or expiring git history (filter-branch, filter-repo, reflog expire, update-ref -d) "
        "loses commits; make new commits instead";
static const char R_DISCARD[] =
        "this overwrites uncommitted changes in the working tree; commit or git stash them first, "
        "or use git restore --staged to unstage only";
static const char R_STASHD[] =
        "dropping or clearing stashes loses saved work; leave the stash in place";
static const char R_DL[] =
        "downloaded code piped into a shell or interpreter runs unreviewed code; download it to a file, "
        "read it, then run it";
static const char R_OBF[] =
        "decoded (base64/hex/compressed) data piped into a shell hides what runs; run the plain command";
static const char R_REV[] =
        "this connects a shell to the network (reverse or bind shell); coding tasks never need it";
static const char R_POWER[] =
        "shutting down, rebooting or stopping system services affects the whole machine; ask the user";
static const char R_KILL[] =
        "killing every process (kill -1) or system daemons takes the machine down; kill only the "
        "process IDs you started";
static const char R_SYSRQ[] = "writing to /proc/sysrq-trigger can crash or reboot the machine";
static const char R_FW[] =
        "flushing or disabling the firewall exposes the machine; leave firewall rules alone";
static const char R_SYSCTL[] =
        "mounting, swapping, loading kernel modules or changing kernel settings alters the whole "
        "system; ask the user";
static const char R_PRIV[] =
        "this escalates privileges (root shell, su, pkexec) or changes user accounts; run the "
        "command without it, or ask the user";
static const char R_CRON[] =
        "crontab and systemd enable install jobs that keep running after this task; ask the user";
static const char R_PUBLISH[] =
        "publishing a package, image or release makes it public and usually cannot be undone; "
        "ask the user before publishing";
static const char R_REPO_DEL[] =
        "deleting a repository or release on the forge destroys it for everyone; ask the user";
static const char R_CLOUD[] =
        "this destroys cloud or cluster resources (terraform destroy, kubectl delete, cloud delete/"
        "terminate); ask the user, or use a plan/dry-run first";
static const char R_DB[] =
        "this drops a database or table, or deletes every row (DELETE without WHERE); add a WHERE "
        "clause or ask the user";
static const char R_BOMB[] = "a fork bomb exhausts the machine's process table; never run it";
static const char R_PARSE[] =
        "the command could not be parsed (unbalanced quotes, parentheses or here-document), so what it "
        "would run is unknown; fix the quoting and try again";
static const char R_LIMIT[] =
        "the command exceeds the analysis limits (size, nesting, number of commands or time); split "
        "it into smaller commands";
static const char R_UNKNOWN[] =
        "the program to run cannot be known before it runs ($var, $(...) output, eval or sh -c of a "
        "variable); write the command out literally";
static const char R_UNKPATH[] =
        "recursive deletion or permission change of a path that cannot be known before it runs "
        "($var may be empty or /); write the path literally";

static const char R_INTERACTIVE[] =
        "an interactive shell reads commands that cannot be checked; pass the commands with sh -c '...'";
static const char R_ESCAPE[] =
        "this hands a shell to another program to run, which escapes the command's checks; run the "
        "command you need directly";

static const char R_WIPE[] =
        "this empties or overwrites every file of the workspace or home directory (truncate -s 0 *, shred, "
        "sed -i that deletes all lines, : > loops, cp /dev/null); change only the files you mean";
static const char R_RM_ALL[] =
        "deleting every file of the workspace, the home directory or / (rm *, xargs rm over a listing, "
        "find -type f -delete) destroys the project; delete only the files you mean (rm -f *.o)";
static const char R_GITWRITE[] =
        "writing git's internals (hooks, config, HEAD, refs, index, objects) by hand can run commands when "
        "the user next uses git, or corrupt the repository; use git commands";
static const char R_GC[] =
        "pruning unreachable objects now (git gc --prune=now, git prune) destroys what git reflog could "
        "still give back; let git gc prune on its own schedule";
static const char R_CONTAINER_WIPE[] =
        "this removes every container, image or volume (docker system prune, docker rm -f $(docker ps -aq), "
        "compose down -v), with the data in them; remove only the ones you started, by name";
static const char R_LIB[] =
        "this loads a library from outside the workspace and the system's library directories into a program "
        "(LD_PRELOAD, enable -f, --engine): its code runs unchecked; build it in the workspace";
static const char R_KILL_DAEMON[] =
        "this kills processes found by a system daemon's name (sshd, dockerd, systemd ...); kill only the "
        "process IDs you started";

static const char R_CONTAINER[] =
        "a container with the host's root file system, --privileged or the host's PID namespace is root "
        "on the machine; mount only the workspace";
static const char R_UPLOAD[] =
        "this sends a file from outside the workspace (or a credential) over the network; send only "
        "files of the project, and ask the user first";

#define SYS_CLASSES (PC_SYSTEM | PC_ROOT | PC_DEVICE)
#define MODIFIERS                                                                                 \
        L("tee", "truncate", "patch", "touch", "mkdir", "chattr", "shred", "sponge", "fallocate", \
          "Out-File", "Set-Content", "Add-Content")
#define FILE_WRITERS                                                                                       \
        L("tee", "truncate", "patch", "chattr", "shred", "sponge", "fallocate", "Out-File", "Set-Content", \
          "Add-Content")
#define ALL_OF (PC_ROOT | PC_HOME | PC_WORKSPACE)
#define COPIERS L("cp", "mv", "install", "ln", "rsync", "scp")
#define PERMS L("chmod", "chown", "chgrp", "setfacl", "chattr")
#define DELETERS L("rm", "rmdir", "unlink", "shred", "srm", "wipe")

const struct rule default_rules[] = {
        /* findings of the parser and unwrapper */
        {.id = "parse-error", .decision = DENY, .reason = R_PARSE, .programs = L("@parse-error")},
        {.id = "limit-exceeded", .decision = DENY, .reason = R_LIMIT, .programs = L("@limit-exceeded")},
        {.id = "fork-bomb", .decision = DENY, .reason = R_BOMB, .programs = L("@fork-bomb")},
        {.id = "download-exec", .decision = DENY, .reason = R_DL, .programs = L("@download-exec")},
        {.id = "obfuscated-exec", .decision = DENY, .reason = R_OBF, .programs = L("@obfuscated-exec")},
        {.id = "reverse-shell", .decision = DENY, .reason = R_REV, .programs = L("@reverse-shell")},
        {.id = "reverse-shell", .decision = DENY, .reason = R_REV, .programs = L("nc", "ncat", "netcat"),
         .any_flags = L("e", "c")},
        {.id = "reverse-shell", .decision = DENY, .reason = R_REV, .programs = L("socat"),
         .args = L("*exec:*", "*EXEC:*", "*system:*", "*SYSTEM:*")},
        {.id = "reverse-shell", .decision = DENY, .reason = R_REV,
         .write_globs = L("/dev/tcp/*", "/dev/udp/*")},
        {.id = "db-drop", .decision = DENY, .reason = R_DB,
         .programs = L("@sql-drop", "@sql-delete-all", "dropdb", "dropuser")},
        {.id = "library-load", .decision = DENY, .reason = R_LIB, .programs = L("@library-load")},
        {.id = "kill-all", .decision = DENY, .reason = R_KILL_DAEMON, .programs = L("@kill-daemon")},
        {.id = "secret-access", .decision = DENY, .reason = R_SECRET, .programs = L("@env-leak")},
        /* the shadow databases through NSS: /etc/shadow by another name */
        {.id = "secret-access", .decision = DENY, .reason = R_SECRET, .programs = L("getent"),
         .sub = L("shadow|gshadow")},
        {.id = "db-drop", .decision = DENY, .reason = R_DB, .programs = L("mysqladmin"), .args = L("drop")},

        /* deletion */
        {.id = "rm-root", .decision = DENY, .reason = R_RM_ROOT, .programs = L("rm"),
         .any_flags = L("r", "no-preserve-root"), .paths = PC_ROOT | PC_HOME | PC_WORKSPACE},
        {.id = "rm-root", .decision = DENY, .reason = R_RM_ROOT, .programs = L("rm"),
         .any_flags = L("no-preserve-root")},
        {.id = "rm-root", .decision = DENY, .reason = R_RM_ALL,
         .programs = L("rm", "unlink", "shred", "srm", "wipe"), .paths = ALL_OF},
        /* every file rewritten: the glob of all of them, not the directory (cp x . copies into it) */
        {.id = "wipe-files", .decision = DENY, .reason = R_WIPE, .programs = FILE_WRITERS, .paths = PC_ALL},
        {.id = "wipe-files", .decision = DENY, .reason = R_WIPE,
         .programs = L("cp", "install", "dd", "rsync"), .target = TGT_LAST, .paths = PC_ALL},
        {.id = "wipe-files", .decision = DENY, .reason = R_WIPE, .clobbers = PC_ALL},
        {.id = "delete-system", .decision = DENY, .reason = R_DEL_SYS, .programs = DELETERS,
         .paths = SYS_CLASSES},
        {.id = "delete-system", .decision = DENY, .reason = R_DEL_SYS, .programs = L("mv"),
         .paths = SYS_CLASSES | PC_HOME},
        {.id = "delete-git", WS_ONLY .decision = DENY, .reason = R_GITDIR, .programs = DELETERS,
         .any_flags = L("r"), .paths = PC_GITDIR},
        {.id = "delete-git", WS_ONLY .decision = DENY, .reason = R_GITDIR,
         .programs = L("rm", "rmdir", "mv", "shred"), .path_globs =
         L("*/.git", "*/.git/objects", "*/.git/objects/*", "*/.git/refs", "*/.git/refs/*", "*/.git/HEAD")},

        {.id = "git-internals", .decision = DENY, .reason = R_GITWRITE,
         .write_globs = L("*/.git/hooks/*", "*/.git/config", "*/.git/HEAD", "*/.git/refs/*",
                          "*/.git/objects/*", "*/.git/index",
                          "*/.git/packed-refs", "*/.git/info/attributes", "*/.git/modules/*/hooks/*",
                          "*/.git/modules/*/config", "*/.git/worktrees/*")},
        {.id = "git-internals", .decision = DENY, .reason = R_GITWRITE,
         .programs = L("tee", "truncate", "patch", "shred", "sponge", "cp", "mv", "install", "ln", "rsync",
                       "sed", "perl", "chmod"),
         .target = TGT_LAST,
         .path_globs = L("*/.git/hooks/*", "*/.git/config", "*/.git/HEAD", "*/.git/refs/*",
                         "*/.git/objects/*", "*/.git/index",
                         "*/.git/packed-refs", "*/.git/info/attributes")},

        /* secrets */
        {.id = "secret-access", .decision = DENY, .reason = R_SECRET, .paths = PC_SECRET,
         .not_programs = L("ls", "stat", "test", "[", "[[", "file", "chmod", "chown", "mkdir", "du",
                           "realpath", "readlink",
                           "dirname", "basename", "echo", "printf", "cd", "pushd", "ssh", "scp", "sftp",
                           "ssh-add", "ssh-keygen", "git", "which", "type", "source", ".", "export", "docker",
                           "docker-compose", "podman", "touch", "find", "dotenv", "direnv", "tee", ":", "rm",
                           "exa", "eza", "tree", "sudo", "env", "nohup", "time")},

        {.id = "secret-access", .decision = DENY, .reason = R_SECRET, .reads = PC_SECRET,
         .not_programs = L("source", ".")},
        /* archives and copies of a whole home directory (keys and tokens with it) */
        {.id = "secret-access", .decision = DENY, .reason = R_UPLOAD,
         .programs = L("tar", "zip", "7z", "7za", "cpio", "rsync", "scp", "rclone", "restic", "borg",
                       "duplicity", "rar", "pax"),
         .paths = PC_HOME | PC_ROOT},

        /* persistence and system files */
        {.id = "sysrq", .decision = DENY, .reason = R_SYSRQ, .write_globs = L("/proc/sysrq-trigger")},
        {.id = "sysrq", .decision = DENY, .reason = R_SYSRQ, .programs = MODIFIERS,
         .path_globs = L("/proc/sysrq-trigger")},
        {.id = "persistence", .decision = DENY, .reason = R_PERSIST, .writes = PC_PERSIST},
        {.id = "persistence", .decision = DENY, .reason = R_PERSIST, .programs = FILE_WRITERS,
         .paths = PC_PERSIST},
        {.id = "persistence", .decision = DENY, .reason = R_PERSIST, .programs = L("sed", "perl"),
         .any_flags = L("i", "in-place"), .paths = PC_PERSIST},
        {.id = "persistence", .decision = DENY, .reason = R_PERSIST, .programs = COPIERS, .target = TGT_LAST,
         .paths = PC_PERSIST},
        {.id = "persistence", .decision = DENY, .reason = R_CRON, .programs = L("crontab"),
         .not_flags = L("l")},
        {.id = "persistence", .decision = DENY, .reason = R_CRON, .programs = L("systemctl"),
         .sub = L("enable|link|preset|set-default")},
        {.id = "persistence", .decision = DENY, .reason = R_CRON, .programs = L("at", "batch")},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .writes = SYS_CLASSES},
        /* kernel parameters set (sysctl -w k=v, sysctl k=v; kernel.core_pattern=|cmd runs cmd) */
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("sysctl"),
         .args = L("*=*")},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = MODIFIERS,
         .paths = SYS_CLASSES},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("sed", "perl"),
         .any_flags = L("i", "in-place"), .paths = SYS_CLASSES},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = COPIERS,
         .target = TGT_LAST, .paths = SYS_CLASSES},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("wget"),
         .any_flags = L("O", "P", "output-document", "directory-prefix"), .paths = SYS_CLASSES},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("curl"),
         .any_flags = L("o", "output"), .paths = SYS_CLASSES},
        {.id = "disk-tool", .decision = DENY, .reason = R_DISK,
         .programs = L("mkfs", "mkfs.*", "mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk",
                       "parted", "wipefs",
                       "blkdiscard", "hdparm", "dmsetup", "cryptsetup", "lvremove", "vgremove", "pvremove",
                       "zpool", "badblocks", "mdadm"),
         .not_flags = L("l", "list", "help", "version")},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("wget"),
         .any_flags = L("O", "P", "output-document", "directory-prefix"), .paths = SYS_CLASSES},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("curl"),
         .any_flags = L("o", "output"), .paths = SYS_CLASSES},
        {.id = "disk-tool", .decision = DENY, .reason = R_DISK, .programs = L("dd"), .args = L("of=/dev/*")},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("wget"),
         .any_flags = L("O", "P", "output-document", "directory-prefix"), .paths = SYS_CLASSES},
        {.id = "write-system", .decision = DENY, .reason = R_WRITE_SYS, .programs = L("curl"),
         .any_flags = L("o", "output"), .paths = SYS_CLASSES},
        {.id = "disk-tool", .decision = DENY, .reason = R_DISK,
         .programs = L("dd", "cp", "cat", "tee", "shred", "pv"), .target = TGT_LAST, .paths = PC_DEVICE},

        /* permissions */
        {.id = "chmod-broad", .decision = DENY, .reason = R_CHMOD, .programs = PERMS, .any_flags = L("R"),
         .paths = PC_ROOT | PC_HOME | PC_WORKSPACE | PC_SYSTEM},
        {.id = "chmod-broad", .decision = DENY, .reason = R_CHMOD, .programs = PERMS,
         .paths = PC_ROOT | PC_SYSTEM},
        {.id = "setuid", .decision = DENY, .reason = R_SETUID, .programs = L("chmod"),
         .sub = L("*+*s*|*=*s*|[2-7][0-7][0-7][0-7]|0[2-7][0-7][0-7][0-7]")},
        {.id = "setuid", .decision = DENY, .reason = R_SETUID, .programs = L("setcap")},

        /* git history */
        {.id = "git-reset-hard", WS_ONLY .decision = DENY, .reason = R_RESET, .programs = L("git"),
         .sub = L("reset"), .any_flags = L("hard", "merge")},
        {.id = "git-clean-force", WS_ONLY .decision = DENY, .reason = R_CLEAN, .programs = L("git"),
         .sub = L("clean"), .any_flags = L("f"), .not_flags = L("n")},
        {.id = "git-push-force", .decision = DENY, .reason = R_PUSHF, .programs = L("git"), .sub = L("push"),
         .any_flags = L("f", "mirror", "force-if-includes")},
        {.id = "git-push-force", .decision = DENY, .reason = R_PUSHF, .programs = L("git"), .sub = L("push"),
         .args = L("+*")},
        {.id = "git-push-delete", .decision = DENY, .reason = R_PUSHD, .programs = L("git"), .sub = L("push"),
         .any_flags = L("d", "prune")},
        {.id = "git-push-delete", .decision = DENY, .reason = R_PUSHD, .programs = L("git"), .sub = L("push"),
         .args = L(":*")},
        {.id = "git-branch-force-delete", WS_ONLY .decision = DENY, .reason = R_BRANCHD, .programs = L("git"),
         .sub = L("branch"), .any_flags = L("D")},
        {.id = "git-branch-force-delete", WS_ONLY .decision = DENY, .reason = R_BRANCHD, .programs = L("git"),
         .sub = L("branch"), .flags = L("d", "f")},
        {.id = "git-history-rewrite", WS_ONLY .decision = DENY, .reason = R_HIST, .programs = L("git"),
         .sub = L("filter-branch|filter-repo")},
        {.id = "git-history-rewrite", WS_ONLY .decision = DENY, .reason = R_HIST, .programs = L("git"),
         .sub = L("reflog", "expire|delete")},
        {.id = "git-history-rewrite", WS_ONLY .decision = DENY, .reason = R_HIST, .programs = L("git"),
         .sub = L("update-ref"), .any_flags = L("d")},
        {.id = "git-gc-prune", WS_ONLY .decision = DENY, .reason = R_GC, .programs = L("git"),
         .sub = L("gc|repack"),
         .args = L("--prune=now|--prune=all|--prune=0*|--prune=*sec*|--prune=*min*|--prune=*hour*|"
                   "--prune=*now*|--unpack-unreachable=now")},
        {.id = "git-gc-prune", WS_ONLY .decision = DENY, .reason = R_GC, .programs = L("git"),
         .sub = L("prune"), .not_flags = L("n", "dry-run")},
        {.id = "git-push-force", .decision = DENY, .reason = R_PUSHF, .programs = L("git"),
         .sub = L("send-pack"), .any_flags = L("f", "force", "mirror")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("checkout|switch"), .any_flags = L("f", "discard-changes")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("checkout"), .args = L("--", ".", ":/*", ":(*")},
        /* git checkout REV PATH (a branch and a path: the path comes back from REV) */
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("checkout", "*", "*"),
         .not_flags = L("b", "B", "orphan", "detach")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("checkout|restore|reset"), .any_flags = L("pathspec-from-file")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("checkout-index"), .any_flags = L("f", "force", "a", "all")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("read-tree"), .flags = L("u"), .any_flags = L("reset", "m")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("worktree", "remove"), .any_flags = L("f", "force")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("submodule", "deinit|update"), .any_flags = L("f", "force")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("restore"), .not_flags = L("staged", "S")},
        {.id = "git-discard-changes", WS_ONLY .decision = DENY, .reason = R_DISCARD, .programs = L("git"),
         .sub = L("restore"), .any_flags = L("worktree", "W")},
        {.id = "git-stash-drop", WS_ONLY .decision = DENY, .reason = R_STASHD, .programs = L("git"),
         .sub = L("stash", "drop|clear")},

        /* system control and privileges */
        {.id = "system-power", .decision = DENY, .reason = R_POWER,
         .programs = L("shutdown", "reboot", "halt", "poweroff", "telinit")},
        {.id = "system-power", .decision = DENY, .reason = R_POWER, .programs = L("init"),
         .sub = L("0|6|1|S|s")},
        {.id = "system-power", .decision = DENY, .reason = R_POWER, .programs = L("systemctl"),
         .sub = L("poweroff|reboot|halt|kexec|suspend|hibernate|rescue|emergency|isolate|stop|disable|mask|"
                  "kill|daemon-reexec")},
        {.id = "system-power", .decision = DENY, .reason = R_POWER, .programs = L("service"),
         .args = L("stop")},
        {.id = "kill-all", .decision = DENY, .reason = R_KILL, .programs = L("kill"), .last = L("-1|1")},
        {.id = "kill-all", .decision = DENY, .reason = R_KILL, .programs = L("pkill", "killall"),
         .args = L("sshd|init|systemd*|dockerd|containerd*|kubelet|-1|sshd:*|docker-proxy|runc|"
                   "NetworkManager|cron|crond|rsyslogd|dbus-daemon|Xorg|sssd|gdm*|lightdm|sddm|cupsd|"
                   "bluetoothd|avahi-daemon|ntpd|chronyd|firewalld|polkitd|udevd|snapd|auditd|journald|etcd|"
                   "kube-*|agetty|wpa_supplicant")},
        {.id = "kill-all", .decision = DENY, .reason = R_KILL, .programs = L("killall5")},
        {.id = "firewall-flush", .decision = DENY, .reason = R_FW,
         .programs = L("iptables", "ip6tables", "iptables-legacy", "iptables-nft"), .any_flags =
         L("F", "flush", "X", "delete-chain", "P", "policy")},
        {.id = "firewall-flush", .decision = DENY, .reason = R_FW, .programs = L("nft"),
         .args = L("flush|delete")},
        {.id = "firewall-flush", .decision = DENY, .reason = R_FW, .programs = L("ufw"),
         .sub = L("disable|reset")},
        {.id = "system-config", .decision = DENY, .reason = R_SYSCTL,
         .programs = L("mount", "umount", "swapoff", "swapon", "modprobe", "insmod", "rmmod", "kexec"), .sub =
         L("*")},
        {.id = "system-config", .decision = DENY, .reason = R_SYSCTL, .programs = L("sysctl"),
         .any_flags = L("w", "write", "p", "load")},
        {.id = "privilege-escalation", .decision = DENY, .reason = R_PRIV,
         .programs = L("su", "pkexec", "visudo", "passwd", "usermod", "useradd", "userdel", "groupadd",
                       "groupdel", "gpasswd", "chpasswd", "adduser", "deluser", "addgroup", "chage",
                       "newgrp")},
        {.id = "privilege-escalation", .decision = DENY, .reason = R_PRIV, .programs = L("sudo", "doas"),
         .any_flags = L("s", "i", "E")},

        {.id = "privilege-escalation", .decision = DENY, .reason = R_CONTAINER,
         .programs = L("docker", "podman", "nerdctl", "ctr"),
         .args = L("/:*|--volume=/:*|-v/:*|--privileged|*src=/,*|*source=/,*|--pid=host|--userns=host")},
        {.id = "secret-access", .decision = DENY, .reason = R_UPLOAD, .programs = L("curl"),
         .any_flags = L("T", "upload-file", "d", "data", "data-binary", "data-raw", "data-urlencode", "F",
                        "form"), .paths = PC_SYSTEM | PC_SECRET},
        {.id = "secret-access", .decision = DENY, .reason = R_UPLOAD, .programs = L("wget"),
         .any_flags = L("post-file", "body-file"), .paths = PC_SYSTEM | PC_SECRET},
        {.id = "secret-access", .decision = DENY, .reason = R_UPLOAD,
         .programs = L("scp", "sftp", "ftp", "tftp", "smbclient"), .paths = PC_SYSTEM | PC_SECRET},
        {.id = "secret-access", .decision = DENY, .reason = R_UPLOAD,
         .programs = L("nc", "ncat", "netcat", "socat", "telnet", "openssl"), .reads = PC_SYSTEM | PC_SECRET},

        /* publishing and remote destruction */
        {.id = "repo-delete", .decision = DENY, .reason = R_REPO_DEL, .programs = L("gh", "glab"),
         .sub = L("repo|release", "delete|archive")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD,
         .programs = L("terraform", "tofu", "pulumi", "cdk", "cdktf"), .sub = L("destroy")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("terraform", "tofu"),
         .sub = L("apply|plan"), .args = L("-destroy")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("terraform", "tofu"),
         .sub = L("state", "rm")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("kubectl", "oc"),
         .sub = L("delete|drain")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("helm"),
         .sub = L("uninstall|delete")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("aws"),
         .args = L("delete-*|terminate-*|deregister-*|rb|remove-*")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("aws"),
         .sub = L("s3", "rm"), .any_flags = L("recursive")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD,
         .programs = L("gcloud", "az", "doctl", "linode-cli", "hcloud", "eksctl", "flyctl", "fly", "vercel",
                       "netlify"), .args = L("delete|destroy|remove|rm")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("heroku"),
         .args = L("*:destroy|destroy")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD,
         .programs = L("kind", "k3d", "minikube", "microk8s", "k3s"), .args = L("delete|reset")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("vagrant"),
         .sub = L("destroy")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("virsh"),
         .sub = L("destroy|undefine|vol-delete|pool-delete")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD,
         .programs = L("multipass", "lxc", "incus"), .sub = L("delete|purge|rm")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("etcdctl"),
         .sub = L("del|defrag")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("consul"),
         .sub = L("kv", "delete")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("gsutil"),
         .sub = L("rm|rb"), .any_flags = L("r", "m")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("gsutil"), .sub = L("rb")},
        {.id = "cloud-destroy", .decision = DENY, .reason = R_CLOUD, .programs = L("rclone"),
         .sub = L("purge|delete|deletefile|rmdirs")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman", "nerdctl"), .sub = L("system", "prune|reset")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman", "nerdctl"), .sub = L("volume", "prune|rm|remove")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman", "nerdctl"), .sub = L("container|image", "prune"), .any_flags =
         L("a", "all", "f", "force")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman", "nerdctl"), .sub = L("rm|rmi|kill|stop"), .args = L("*\001*")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman", "nerdctl"), .sub = L("container|image", "rm|kill|stop"), .args =
         L("*\001*")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman"), .sub = L("compose", "down"), .any_flags = L("v", "volumes")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker-compose", "podman-compose"), .sub = L("down"), .any_flags = L("v", "volumes")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE,
         .programs = L("docker", "podman"), .sub = L("stack", "rm")},
        {.id = "container-wipe", .decision = DENY, .reason = R_CONTAINER_WIPE, .programs = L("crictl"),
         .sub = L("rm|rmi|rmp"), .any_flags = L("a", "all", "prune")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("npm", "pnpm", "yarn", "bun"),
         .sub = L("publish|unpublish|deprecate")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("cargo"),
         .sub = L("publish|yank|owner")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("twine"), .sub = L("upload")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("gem"), .sub = L("push|yank")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH,
         .programs = L("poetry", "flit", "hatch", "uv", "pdm"), .sub = L("publish")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("gh", "glab"),
         .sub = L("release", "create")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("dotnet"),
         .sub = L("nuget", "push")},
        {.id = "publish", .decision = ASK, .reason = R_PUBLISH, .programs = L("docker", "podman"),
         .sub = L("push")},

        /* what cannot be known */
        {.id = "unknown-path", .decision = ASK, .reason = R_UNKPATH, .programs = L("rm"), .any_flags = L("r"),
         .paths = PC_UNKNOWN},
        {.id = "unknown-path", .decision = ASK, .reason = R_UNKPATH, .programs = PERMS, .any_flags = L("R"),
         .paths = PC_UNKNOWN},
        {.id = "interactive-shell", .decision = ASK, .reason = R_INTERACTIVE,
         .programs = L("@interactive-shell")},
        {.id = "shell-escape", .decision = ASK, .reason = R_ESCAPE,
         .args = L("*/bin/sh|*/bin/sh[!a-z_.-]*|*/bin/bash|*/bin/bash[!a-z_.-]*|*/bin/dash|*/bin/zsh|"
                   "*/bin/ksh|*/bin/csh|*/bin/tcsh|*:shell*|*:!*sh*"),
         .not_programs = L("echo", "printf", "grep", "egrep", "fgrep", "rg", "ls", "file", "stat", "which",
                           "type", "whereis", "chsh", "cat", "head", "tail",
                           "less", "more", "readlink", "realpath", "ldd", "strings", "sed", "awk", "test",
                           "[", "[[", "useradd", "usermod", "cmp", "diff", "md5sum", "sha256sum", "sha1sum",
                           "cp", "ln", "du", "wc", "objdump", "nm", "git", "update-alternatives", "chmod",
                           "chown", "sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "env", "sudo", "nice",
                           "nohup", "timeout", "exec", "command", "xargs", "find", "ssh", "docker", "podman",
                           "kubectl", "time")},
        {.id = "shell-escape", .decision = ASK, .reason = R_ESCAPE,
         .programs = L("ssh", "scp", "sftp", "rsync"), .args = L("*ProxyCommand=*|*LocalCommand=*")},
        {.id = "unknown-command", .decision = ASK, .reason = R_UNKNOWN, .programs = L("@unknown-command")},
};

const size_t n_default_rules = ARRAY_SIZE(default_rules);

const struct effects_cfg default_effects = {
        .mass_delete_count = 200,
        .mass_delete_min = 20,
        .mass_delete_share = 0.5,
        .max_file_size = 256LL * 1024 * 1024,
        .lost_work_min = 5,
        .protect = NULL,
};

/* ---- path classes by name (policy files) ---- */

static const struct {
        const char *name;
        unsigned bit;
} classes[] = {
        {"root", PC_ROOT},         {"system", PC_SYSTEM}, {"home", PC_HOME},
        {"workspace", PC_WORKSPACE}, {"secret", PC_SECRET},     {"persist", PC_PERSIST},
        {"device", PC_DEVICE}, {"gitdir", PC_GITDIR}, {"tmp", PC_TMP},           {"unknown", PC_UNKNOWN},
        {"inside", PC_INSIDE},
};

unsigned path_class_parse(const char *name)
{
        for (size_t k = 0; k < ARRAY_SIZE(classes); k++)
                if (!strcmp(classes[k].name, name))
                        return classes[k].bit;
        return 0;
}

