/* Corpus driver: reads JSON Lines ({"command": "...", ...}) on stdin and writes each object
 * back with "decision", "rule" and "command_hit" added.  It only parses and matches the
 * strings (policy_check_shell); nothing is ever executed. */
#define _GNU_SOURCE
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "policy/policy.h"
#include "txbox.h"

int main(int argc, char **argv)
{
        struct txbox_error err = {0};
        struct policy *p = NULL;
        if (policy_load(argc > 1 ? argv[1] : NULL, &p, &err) < 0) {
                fprintf(stderr, "driver: %s\n", err.msg);
                return 2;
        }
        /* A fixed, made-up context so results do not depend on who runs the suite. */
        struct policy_ctx ctx = {.workspace = "/work/project", .home = "/home/agent", .cwd = "/work/project"};
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, stdin) > 0) {
                json_t *o = json_loads(line, 0, NULL);
                const char *cmd = o ? json_string_value(json_object_get(o, "command")) : NULL;
                if (!cmd) {
                        json_decref(o);
                        continue;
                }
                struct policy_result r;
                policy_check_shell(p, cmd, &ctx, &r);
                json_object_set_new(o, "decision", json_string(policy_decision_name(r.decision)));
                json_object_set_new(o, "rule", r.rule[0] ? json_string(r.rule) : json_null());
                json_object_set_new(o, "command_hit", json_string(r.command));
                char *s = json_dumps(o, JSON_COMPACT);
                puts(s);
                free(s);
                json_decref(o);
        }
        free(line);
        policy_free(p);
        return 0;
}
