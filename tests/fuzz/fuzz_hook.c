/* Fuzz target: an agent's pre-tool hook event through txbox hook's whole judgement
 * (hook_answer: JSON event, tool and command fields, policy, Claude Code's settings), for
 * each agent: the first byte picks claude-code, codex or gemini, the rest is the event.
 * The workspace and HOME are an empty temporary directory; the hook only reads.  Its
 * answer goes to /dev/null: what is checked is that it returns a protocol status. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz.h"

static struct global_opts g;
static char dir[4096];

static void remove_dir(void) { rmdir(dir); } /* the hook only reads: it stays empty */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/txbox-fuzz-hook-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
                abort();
        atexit(remove_dir);
        setenv("HOME", dir, 1);
        unsetenv("CLAUDE_PROJECT_DIR");
        g.workspace = dir;
        return 0;
}

/* The answers are not what is checked: they go to /dev/null while the hook runs. */
static int quiet(int *saved)
{
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        fflush(stdout);
        fflush(stderr);
        saved[0] = dup(STDOUT_FILENO), saved[1] = dup(STDERR_FILENO);
        if (null < 0 || saved[0] < 0 || saved[1] < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
                abort();
        close(null);
        return 0;
}

static void loud(const int *saved)
{
        fflush(stdout);
        fflush(stderr);
        if (dup2(saved[0], STDOUT_FILENO) < 0 || dup2(saved[1], STDERR_FILENO) < 0)
                abort();
        close(saved[0]);
        close(saved[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const agents[] = {"claude-code", "codex", "gemini"};
        if (!size)
                return 0;
        int saved[2];
        quiet(saved);
        int r = hook_answer(agents[data[0] % 3], (const char *)data + 1, size - 1, &g);
        loud(saved);
        if (r != 0 && r != 2)
                abort();
        return 0;
}
