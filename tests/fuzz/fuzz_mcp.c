/* Fuzz target: MCP JSON-RPC input through the server's framing and dispatch (mcp_serve:
 * lines, sizes, JSON, ids, methods, tool arguments).  The server has no workspace, so no
 * tool ever runs a command: tools/call answers "no workspace" once its arguments pass the
 * schema.  Every reply must be one JSON-RPC 2.0 object on one line. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "faces/mcp.h"

static struct mcp_server *srv;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        struct mcp_opts o = {.max_message = 64 * 1024}; /* small, so that the cap is reached */
        mcp_server_new(NULL, &o, &srv);
        return 0;
}

static void check_replies(int fd)
{
        off_t end = lseek(fd, 0, SEEK_END);
        char *buf = malloc((size_t)end + 1);
        if (!buf || pread(fd, buf, (size_t)end, 0) != end)
                abort();
        buf[end] = 0;
        for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                json_t *j = json_loads(l, 0, NULL);
                if (!json_is_object(j) || strcmp(json_string_value(json_object_get(j, "jsonrpc")) ?: "", "2.0"))
                        abort();
                if (!json_object_get(j, "result") == !json_object_get(j, "error"))
                        abort();
                json_decref(j);
        }
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int in = memfd_create("mcp-in", MFD_CLOEXEC), out = memfd_create("mcp-out", MFD_CLOEXEC);
        if (in < 0 || out < 0)
                abort();
        if (size && write(in, data, size) != (ssize_t)size)
                abort();
        lseek(in, 0, SEEK_SET);
        if (mcp_serve(srv, in, out) < 0)
                abort();
        check_replies(out);
        close(in);
        close(out);
        return 0;
}
