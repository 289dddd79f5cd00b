/* Policy files (YAML, read with libfyaml), the built-in one (default.yml, embedded) among
 * them.  See docs/POLICY.md for the format:
 *
 *   defaults: true            # keep the built-in rules after these (default true)
 *   effects: {mass_delete_count: 200, mass_delete_min: 20, mass_delete_share: 0.5,
 *             max_file_size: 268435456, lost_work_min: 5, protect: ["secrets/"]}
 *   rules:
 *     - id: no-docker-push
 *       decision: deny
 *       reason: "pushing images publishes them; ask the user"
 *       program: docker
 *       subcommand: push
 *       match: ["docker push img"]       # examples: decided by this rule ...
 *       not_match: ["docker pull img"]   # ... and not (policy_test_examples)
 *
 * Every error names the file, the line and what is wrong, because the user has to fix it. */
#define _GNU_SOURCE
#include "pol.h"

#include <fcntl.h>
#include <libfyaml.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"

#define MAX_POLICY_FILE POL_MAX_FILE
#define MAX_RULES 4096

struct loader {
        struct policy *p;
        const char *file;
        struct txbox_error *err;
        /* an untrusted workspace policy: never the defaults (they are judged beside it) */
        bool own_rules_only;
        bool defaults_off;   /* the file said defaults: false */
        bool builtin;        /* the built-in policy itself: it holds the defaults */
        const struct policy *defaults; /* the built-in policy, for the others */
};

static int node_line(struct fy_node *n)
{
        struct fy_token *t = n ? fy_node_get_scalar_token(n) : NULL;
        if (!t && n)
                t = fy_node_get_tag_token(n);
        if (!t && n && fy_node_is_mapping(n)) {
                void *it = NULL;
                struct fy_node_pair *pr = fy_node_mapping_iterate(n, &it);
                t = pr ? fy_node_get_scalar_token(fy_node_pair_key(pr)) : NULL;
        }
        if (!t && n && fy_node_is_sequence(n)) {
                void *it = NULL;
                struct fy_node *c = fy_node_sequence_iterate(n, &it);
                return c ? node_line(c) : 0;
        }
        const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
        return m ? m->line + 1 : 0;
}

static int bad(struct loader *L, struct fy_node *n, const char *what, const char *detail)
{
        return tx_err(L->err, EINVAL, "policy '%s' line %d: %s%s%s", L->file, node_line(n), what,
                      detail ? ": " : "", detail ? detail : "");
}

static char *own(struct loader *L, const char *s)
{
        char *c = xstrdup(s);
        strvec_push(&L->p->owned, c);
        return c;
}

static void *own_array(struct loader *L, size_t n)
{
        void *a = xcalloc(n + 1, sizeof(char *));
        L->p->owned_arrays = xrealloc(L->p->owned_arrays, (L->p->nowned_arrays + 1) * sizeof(void *));
        L->p->owned_arrays[L->p->nowned_arrays++] = a;
        return a;
}

static const char *scalar(struct fy_node *n)
{
        return n && fy_node_is_scalar(n) ? fy_node_get_scalar0(n) : NULL;
}

/* A string or a list of strings (a string with spaces splits into words for subcommand). */
static int str_list(struct loader *L, struct fy_node *n, bool split, const char *const **out)
{
        const char *s = scalar(n);
        if (s) {
                size_t cnt = 1;
                for (const char *p = s; split && *p; p++)
                        cnt += *p == ' ';
                const char **a = own_array(L, cnt);
                char *copy = own(L, s), *save = NULL;
                size_t k = 0;
                if (split)
                        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
                                a[k++] = t;
                else
                        a[k++] = copy;
                *out = a;
                return 0;
        }
        if (!n || !fy_node_is_sequence(n))
                return bad(L, n, "expected a string or a list of strings", NULL);
        const char **a = own_array(L, (size_t)fy_node_sequence_item_count(n));
        void *it = NULL;
        size_t k = 0;
        for (struct fy_node *c; (c = fy_node_sequence_iterate(n, &it));) {
                if (!scalar(c))
                        return bad(L, c, "expected a string in the list", NULL);
                a[k++] = own(L, scalar(c));
        }
        *out = a;
        return 0;
}

static const struct {
        const char *name;
        unsigned bit;
} classes[] = {
        {"root", PC_ROOT},       {"system", PC_SYSTEM},   {"home", PC_HOME},     {"workspace", PC_WORKSPACE},
        {"secret", PC_SECRET},   {"persist", PC_PERSIST}, {"device", PC_DEVICE}, {"gitdir", PC_GITDIR},
        {"tmp", PC_TMP},         {"unknown", PC_UNKNOWN}, {"inside", PC_INSIDE}, {"all", PC_ALL},
};

unsigned path_class_parse(const char *name)
{
        for (size_t k = 0; k < ARRAY_SIZE(classes); k++)
                if (!strcmp(classes[k].name, name))
                        return classes[k].bit;
        return 0;
}

/* Path classes by name; anything else is a glob (absolute, ~/..., or workspace-relative). */
static int paths_field(struct loader *L, struct fy_node *n, unsigned *bits, const char *const **globs)
{
        const char *const *list;
        int r = str_list(L, n, false, &list);
        if (r < 0)
                return r;
        size_t ng = 0, cnt = 0;
        while (list[cnt])
                cnt++;
        const char **g = own_array(L, cnt);
        for (size_t k = 0; k < cnt; k++) {
                unsigned b = path_class_parse(list[k]);
                if (b)
                        *bits |= b;
                else
                        g[ng++] = list[k];
        }
        *globs = ng ? g : NULL;
        return 0;
}

static int decision_of(struct loader *L, struct fy_node *n, enum policy_decision *d)
{
        static const char *const names[] = {"allow", "deny", "ask"};
        const char *s = scalar(n);
        for (size_t k = 0; s && k < ARRAY_SIZE(names); k++)
                if (!strcmp(s, names[k])) {
                        *d = (enum policy_decision)k;
                        return 0;
                }
        return bad(L, n, "decision must be allow, deny or ask", s);
}

typedef int field_fn(struct loader *L, struct fy_node *v, struct rule *r);

static int f_id(struct loader *L, struct fy_node *v, struct rule *r)
{
        const char *s = scalar(v);
        if (!s || !*s || strlen(s) >= 64)
                return bad(L, v, "id must be a string of 1-63 characters", NULL);
        r->id = own(L, s);
        return 0;
}
static int f_decision(struct loader *L, struct fy_node *v, struct rule *r)
{
        return decision_of(L, v, &r->decision);
}
static int f_reason(struct loader *L, struct fy_node *v, struct rule *r)
{
        if (!scalar(v))
                return bad(L, v, "reason must be a string", NULL);
        r->reason = own(L, scalar(v));
        return 0;
}
static int f_program(struct loader *L, struct fy_node *v, struct rule *r)
{
        return str_list(L, v, false, &r->programs);
}
static int f_not_program(struct loader *L, struct fy_node *v, struct rule *r)
{
        return str_list(L, v, false, &r->not_programs);
}
static int f_sub(struct loader *L, struct fy_node *v, struct rule *r)
{
        return str_list(L, v, true, &r->sub);
}
/* Flags are compared as the matcher stores them, at most POL_MAX_FLAG - 1 bytes: a longer
 * one in a rule could never match, and the rule would silently do nothing. */
static int flag_list(struct loader *L, struct fy_node *v, const char *const **out)
{
        int r = str_list(L, v, false, out);
        for (const char *const *f = *out; r == 0 && *f; f++)
                if (strlen(*f) >= POL_MAX_FLAG)
                        return bad(L, v, "flag too long (at most 63 characters)", *f);
        return r;
}
static int f_flags(struct loader *L, struct fy_node *v, struct rule *r) { return flag_list(L, v, &r->flags); }
static int f_any_flags(struct loader *L, struct fy_node *v, struct rule *r)
{
        return flag_list(L, v, &r->any_flags);
}
static int f_not_flags(struct loader *L, struct fy_node *v, struct rule *r)
{
        return flag_list(L, v, &r->not_flags);
}
static int f_args(struct loader *L, struct fy_node *v, struct rule *r)
{
        return str_list(L, v, false, &r->args);
}
static int f_last(struct loader *L, struct fy_node *v, struct rule *r)
{
        return str_list(L, v, false, &r->last);
}
static int f_paths(struct loader *L, struct fy_node *v, struct rule *r)
{
        return paths_field(L, v, &r->paths, &r->path_globs);
}
static int f_writes(struct loader *L, struct fy_node *v, struct rule *r)
{
        return paths_field(L, v, &r->writes, &r->write_globs);
}
static int f_reads(struct loader *L, struct fy_node *v, struct rule *r)
{
        return paths_field(L, v, &r->reads, &r->read_globs);
}
static int f_truncates(struct loader *L, struct fy_node *v, struct rule *r)
{
        return paths_field(L, v, &r->clobbers, &r->clobber_globs);
}
static int f_description(struct loader *L, struct fy_node *v, struct rule *r)
{
        if (!scalar(v))
                return bad(L, v, "description must be a string", NULL);
        r->description = own(L, scalar(v));
        return 0;
}
/* Examples are shell strings as an agent would send them; an empty one says nothing. */
static int examples(struct loader *L, struct fy_node *v, const char *const **out)
{
        int r = str_list(L, v, false, out);
        for (const char *const *e = *out; r == 0 && *e; e++)
                if (!**e)
                        return bad(L, v, "an example must not be empty", NULL);
        return r;
}
static int f_match(struct loader *L, struct fy_node *v, struct rule *r) { return examples(L, v, &r->match); }
static int f_not_match(struct loader *L, struct fy_node *v, struct rule *r)
{
        return examples(L, v, &r->not_match);
}
static int f_target(struct loader *L, struct fy_node *v, struct rule *r)
{
        const char *s = scalar(v);
        if (s && !strcmp(s, "any"))
                r->target = TGT_ANY;
        else if (s && !strcmp(s, "last"))
                r->target = TGT_LAST;
        else
                return bad(L, v, "path_target must be any or last", s);
        return 0;
}

/* scope: all (the default: judged at every exec) or workspace (guards only the workspace
 * and its repository: a well-known tool's own internal step is judged by its effects). */
static int f_scope(struct loader *L, struct fy_node *v, struct rule *r)
{
        const char *s = scalar(v);
        if (s && !strcmp(s, "all"))
                r->workspace_scope = false;
        else if (s && !strcmp(s, "workspace"))
                r->workspace_scope = true;
        else
                return bad(L, v, "scope must be all or workspace", s);
        return 0;
}

static const struct {
        const char *key;
        field_fn *fn;
} fields[] = {
        {"id", f_id},           {"decision", f_decision},   {"reason", f_reason},
        {"program", f_program}, {"programs", f_program},    {"not_program", f_not_program},
        {"subcommand", f_sub},  {"flags", f_flags},         {"any_flags", f_any_flags},
        {"not_flags", f_not_flags}, {"args", f_args},       {"last_arg", f_last},
        {"paths", f_paths},     {"path_target", f_target},  {"writes", f_writes},
        {"reads", f_reads},     {"truncates", f_truncates}, {"scope", f_scope},
        {"description", f_description}, {"match", f_match}, {"not_match", f_not_match},
};

static int load_rule(struct loader *L, struct fy_node *n, struct rule *r)
{
        if (!fy_node_is_mapping(n))
                return bad(L, n, "each rule must be a mapping", NULL);
        memset(r, 0, sizeof(*r));
        r->decision = POLICY_DENY;
        r->builtin = L->builtin;
        r->line = node_line(n);
        void *it = NULL;
        for (struct fy_node_pair *pr; (pr = fy_node_mapping_iterate(n, &it));) {
                const char *k = scalar(fy_node_pair_key(pr));
                size_t f = 0;
                while (f < ARRAY_SIZE(fields) && (!k || strcmp(k, fields[f].key)))
                        f++;
                if (f == ARRAY_SIZE(fields))
                        return bad(L, fy_node_pair_key(pr), "unknown rule key", k);
                int ret = fields[f].fn(L, fy_node_pair_value(pr), r);
                if (ret < 0)
                        return ret;
        }
        if (!r->id)
                return bad(L, n, "rule without an id", NULL);
        if (!r->reason && r->decision != POLICY_ALLOW)
                return bad(L, n, "rule needs a reason the agent can act on", r->id);
        if (!r->programs && !r->paths && !r->path_globs && !r->writes && !r->write_globs && !r->args &&
            !r->reads && !r->read_globs && !r->clobbers && !r->clobber_globs)
                return bad(L, n, "rule matches everything; give program, args, paths, writes, reads or truncates",
                           r->id);
        return 0;
}

static int number(struct loader *L, struct fy_node *v, double min, double max, double *out)
{
        const char *s = scalar(v);
        char *end = NULL;
        double d = s ? strtod(s, &end) : -1;
        if (s && end && *end) { /* 100M, 2G */
                static const char units[] = "KMG";
                const char *u = strchr(units, *end);
                for (long k = u && !end[1] ? u - units + 1 : 0; k > 0; k--)
                        d *= 1024;
                if (!u || end[1])
                        d = -1;
        }
        if (!(d >= min && d <= max))
                return bad(L, v, "number out of range", s);
        *out = d;
        return 0;
}

static int load_effects(struct loader *L, struct fy_node *n)
{
        struct effects_cfg *e = &L->p->eff;
        if (!fy_node_is_mapping(n))
                return bad(L, n, "effects must be a mapping", NULL);
        void *it = NULL;
        for (struct fy_node_pair *pr; (pr = fy_node_mapping_iterate(n, &it));) {
                const char *k = scalar(fy_node_pair_key(pr));
                struct fy_node *v = fy_node_pair_value(pr);
                double d = 0;
                int r = 0;
                if (k && !strcmp(k, "protect"))
                        r = str_list(L, v, false, &e->protect);
                else if (k && !strcmp(k, "mass_delete_count") && !(r = number(L, v, 1, 1e9, &d)))
                        e->mass_delete_count = (long)d;
                else if (k && !strcmp(k, "mass_delete_min") && !(r = number(L, v, 1, 1e9, &d)))
                        e->mass_delete_min = (long)d;
                else if (k && !strcmp(k, "mass_delete_share") && !(r = number(L, v, 0.0001, 1, &d)))
                        e->mass_delete_share = d;
                else if (k && !strcmp(k, "max_file_size") && !(r = number(L, v, 1, 1e15, &d)))
                        e->max_file_size = (int64_t)d;
                else if (k && !strcmp(k, "lost_work_min") && !(r = number(L, v, 1, 1e9, &d)))
                        e->lost_work_min = (long)d;
                else if (!r && (!k || (strcmp(k, "mass_delete_count") && strcmp(k, "mass_delete_min") &&
                                       strcmp(k, "mass_delete_share") && strcmp(k, "max_file_size") &&
                                       strcmp(k, "lost_work_min"))))
                        return bad(L, fy_node_pair_key(pr), "unknown effects key", k);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A path of sandbox.hide or sandbox.caches, lexically: "~" or "~/x" (home), "/x" or a
 * workspace-relative x (hide only); no ".." (it would leave where it seems to point), not
 * the root, at most PATH_MAX - 1 bytes. */
static const char *sandbox_path_error(const char *s, bool home_only)
{
        if (!s || !*s)
                return "expected a path";
        if (strlen(s) >= PATH_MAX)
                return "path too long";
        if (s[0] == '~' && s[1] && s[1] != '/')
                return "~user is not supported; write ~/ or an absolute path";
        if (home_only && (s[0] != '~' || !s[1]))
                return "a cache is a directory under the home: write ~/PATH";
        const char *rest = s[0] == '~' ? s + 1 : s;
        bool only_slashes = true;
        for (const char *c = rest; *c; c++)
                only_slashes &= *c == '/';
        if (only_slashes && s[0] != '~')
                return "the root cannot be hidden";
        if (home_only && only_slashes)
                return "the home itself cannot be a cache";
        for (const char *c = rest; *c;) {
                while (*c == '/')
                        c++;
                size_t n = strcspn(c, "/");
                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return "\"..\" is not allowed in the path";
                c += n;
        }
        return NULL;
}

static int sandbox_paths(struct loader *L, struct fy_node *v, bool home_only, const char *const **out)
{
        const char *const *list;
        int r = str_list(L, v, false, &list);
        size_t n = 0;

        if (r < 0)
                return r;
        for (; list[n]; n++) {
                const char *why = sandbox_path_error(list[n], home_only);
                if (why)
                        return bad(L, v, why, list[n]);
        }
        if (n > POL_MAX_SANDBOX_PATHS)
                return bad(L, v, "too many paths (at most 256)", NULL);
        *out = list;
        return 0;
}

static int load_sandbox(struct loader *L, struct fy_node *n)
{
        struct policy_sandbox *sb = &L->p->sandbox;
        if (!fy_node_is_mapping(n))
                return bad(L, n, "sandbox must be a mapping", NULL);
        void *it = NULL;
        for (struct fy_node_pair *pr; (pr = fy_node_mapping_iterate(n, &it));) {
                const char *k = scalar(fy_node_pair_key(pr)), *s;
                struct fy_node *v = fy_node_pair_value(pr);
                int r = 0;
                if (k && !strcmp(k, "hide"))
                        r = sandbox_paths(L, v, false, &sb->hide);
                else if (k && !strcmp(k, "caches") && (s = scalar(v)) && !strcmp(s, "true"))
                        sb->caches = POLICY_CACHES_DEFAULT;
                else if (k && !strcmp(k, "caches") && (s = scalar(v)) && !strcmp(s, "false"))
                        sb->caches = POLICY_CACHES_OFF;
                else if (k && !strcmp(k, "caches") && scalar(v))
                        return bad(L, v, "caches must be true, false or a list of ~/PATH", scalar(v));
                else if (k && !strcmp(k, "caches")) {
                        r = sandbox_paths(L, v, true, &sb->cache_paths);
                        sb->caches = POLICY_CACHES_LIST;
                } else
                        return bad(L, fy_node_pair_key(pr), "unknown sandbox key", k);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_rules(struct loader *L, struct fy_node *n, bool defaults)
{
        if (n && !fy_node_is_sequence(n))
                return bad(L, n, "rules must be a list", NULL);
        size_t cnt = n ? (size_t)fy_node_sequence_item_count(n) : 0;
        if (cnt > MAX_RULES)
                return bad(L, n, "too many rules", NULL);
        struct policy *p = L->p;
        const struct policy *d = defaults ? L->defaults : NULL;
        p->rules = xcalloc(cnt + (d ? d->nrules : 0) + 1, sizeof(*p->rules));
        void *it = NULL;
        for (struct fy_node *c; n && (c = fy_node_sequence_iterate(n, &it));) {
                int r = load_rule(L, c, &p->rules[p->nrules]);
                if (r < 0)
                        return r;
                p->nrules++;
        }
        for (size_t k = 0; d && k < d->nrules; k++)
                p->rules[p->nrules++] = d->rules[k]; /* its strings stay the built-in policy's */
        return 0;
}

static int load_root(struct loader *L, struct fy_node *root)
{
        if (!root || !fy_node_is_mapping(root))
                return bad(L, root, "the policy must be a mapping with rules:", NULL);
        bool defaults = true;
        struct fy_node *rules = NULL;
        void *it = NULL;
        for (struct fy_node_pair *pr; (pr = fy_node_mapping_iterate(root, &it));) {
                const char *k = scalar(fy_node_pair_key(pr));
                struct fy_node *v = fy_node_pair_value(pr);
                int r = 0;
                if (k && !strcmp(k, "defaults") && L->builtin) {
                        return bad(L, fy_node_pair_key(pr), "the built-in policy is the defaults", k);
                } else if (k && !strcmp(k, "defaults")) {
                        const char *s = scalar(v);
                        if (!s || (strcmp(s, "true") && strcmp(s, "false")))
                                return bad(L, v, "defaults must be true or false", s);
                        defaults = !strcmp(s, "true");
                        L->defaults_off = !defaults;
                } else if (k && !strcmp(k, "rules"))
                        rules = v;
                else if (k && !strcmp(k, "effects"))
                        r = load_effects(L, v);
                else if (k && !strcmp(k, "sandbox"))
                        r = load_sandbox(L, v);
                else if (k && !strcmp(k, "version")) {
                        if (!scalar(v) || strcmp(scalar(v), "1"))
                                return bad(L, v, "unsupported version (this txbox reads version 1)",
                                           scalar(v));
                } else
                        return bad(L, fy_node_pair_key(pr), "unknown key", k);
                if (r < 0)
                        return r;
        }
        return load_rules(L, rules, defaults && !L->own_rules_only && !L->builtin);
}

/* YAML features the loader does not model are refused, not read as something else: an
 * alias (program: *p) would be taken for a program named after the anchor, and the user's
 * deny rule would silently never match; a merge key (<<) or a tag changes what a value
 * means in ways the fields below do not see. */
static int plain_yaml(struct loader *L, struct fy_node *n, int depth)
{
        size_t len = 0;
        const char *what = NULL, *name = NULL;
        if (!n)
                return 0;
        if (depth > 64)
                return bad(L, n, "nested too deep", NULL);
        if (fy_node_is_alias(n))
                what = "aliases (*name) are not supported; write the value out",
                name = fy_node_get_scalar(n, &len);
        else if (fy_node_get_anchor(n))
                what = "anchors and aliases (&name, *name) are not supported; write the value out",
                name = fy_anchor_get_text(fy_node_get_anchor(n), &len);
        else if (fy_node_get_tag(n, &len))
                what = "tags (!tag) are not supported", name = fy_node_get_tag(n, &len);
        if (what) {
                char detail[80];
                snprintf(detail, sizeof(detail), "%.*s", (int)(len < 64 ? len : 64), name ? name : "");
                return bad(L, n, what, name ? detail : NULL);
        }
        void *it = NULL;
        int r = 0;
        if (fy_node_is_sequence(n))
                for (struct fy_node *c; r == 0 && (c = fy_node_sequence_iterate(n, &it));)
                        r = plain_yaml(L, c, depth + 1);
        if (fy_node_is_mapping(n))
                for (struct fy_node_pair *pr; r == 0 && (pr = fy_node_mapping_iterate(n, &it));) {
                        struct fy_node *k = fy_node_pair_key(pr);
                        if (!scalar(k))
                                return bad(L, k ? k : n, "mapping keys must be plain strings", NULL);
                        if (!strcmp(scalar(k), "<<") && fy_node_get_style(k) == FYNS_PLAIN)
                                return bad(L, k, "merge keys (<<) are not supported; write the keys out",
                                           NULL);
                        r = plain_yaml(L, k, depth + 1);
                        if (r == 0)
                                r = plain_yaml(L, fy_node_pair_value(pr), depth + 1);
                }
        return r;
}

static void quiet_output(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
        (void)diag, (void)user, (void)buf, (void)len; /* the library never prints */
}

static int syntax_error(struct loader *L, struct fy_diag *diag)
{
        void *it = NULL;
        struct fy_diag_error *e = diag ? fy_diag_errors_iterate(diag, &it) : NULL;
        if (e)
                return tx_err(L->err, EINVAL, "policy '%s' line %d: %s", L->file, e->line, e->msg);
        return tx_err(L->err, EINVAL, "policy '%s': not valid YAML", L->file);
}

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
        size_t l = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
                : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
        if (!l || l > n || (l == 2 && s[0] < 0xc2) || (l == 4 && s[0] > 0xf4))
                return 0;
        for (size_t k = 1; k < l; k++)
                if ((s[k] & 0xc0) != 0x80)
                        return 0;
        if ((l == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (l == 4 && s[0] == 0xf0 && s[1] < 0x90))
                return 0; /* overlong */
        if ((l == 3 && s[0] == 0xed && s[1] >= 0xa0) || (l == 4 && s[0] == 0xf4 && s[1] >= 0x90))
                return 0; /* a UTF-16 surrogate, or past U+10FFFF */
        return l;
}

/* YAML is printable Unicode text.  libfyaml 0.7 accepts invalid UTF-8 in values, and loops
 * forever on it in a directive ("%\xff"): only text is handed to it. */
static int plain_text(struct loader *L, const char *text, size_t len)
{
        const unsigned char *s = (const unsigned char *)text;
        int line = 1;
        for (size_t i = 0; i < len;) {
                size_t l = utf8_len(s + i, len - i);
                if (!l || (s[i] < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') || s[i] == 0x7f)
                        return tx_err(L->err, EINVAL, "policy '%s' line %d: %s", L->file, line,
                                      l ? "a control character (not text)" : "not valid UTF-8 text");
                line += s[i] == '\n';
                i += l;
        }
        return 0;
}

static int parse_file(struct loader *L, const char *text, size_t len)
{
        int t = plain_text(L, text, len);
        if (t < 0)
                return t;
        struct fy_diag_cfg dc;
        fy_diag_cfg_default(&dc);
        dc.fp = NULL;
        dc.output_fn = quiet_output;
        struct fy_diag *diag = fy_diag_create(&dc);
        if (diag)
                fy_diag_set_collect_errors(diag, true);
        struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG, .diag = diag};
        struct fy_parser *fyp = fy_parser_create(&cfg);
        struct fy_document *doc = NULL, *more = NULL;
        int r;
        if (!fyp || fy_parser_set_string(fyp, text, len) < 0)
                r = tx_err(L->err, ENOMEM, "policy '%s': cannot start the YAML parser", L->file);
        else if (!(doc = fy_parse_load_document(fyp)))
                r = syntax_error(L, diag);
        else if ((more = fy_parse_load_document(fyp)))
                /* A second document would be ignored, with every rule in it. */
                r = bad(L, fy_document_root(more), "more than one YAML document (---); a policy is one",
                        NULL);
        else if (diag && fy_diag_got_error(diag))
                r = syntax_error(L, diag);
        else if ((r = plain_yaml(L, fy_document_root(doc), 0)) == 0)
                r = load_root(L, fy_document_root(doc));
        if (more)
                fy_parse_document_destroy(fyp, more);
        if (doc)
                fy_parse_document_destroy(fyp, doc);
        if (fyp)
                fy_parser_destroy(fyp);
        if (diag)
                fy_diag_destroy(diag);
        return r;
}

/* ---- the built-in policy ---- */

/* What the built-in policy must hold for the engine to fail closed (match.c refuses input it
 * could not read with these rules, whatever a policy file says), and the effect limits every
 * other policy starts from. */
static int builtin_complete(struct loader *L)
{
        const struct effects_cfg *e = &L->p->eff;
        static const char *const must[] = {"parse-error", "limit-exceeded"};

        for (size_t k = 0; k < ARRAY_SIZE(must); k++) {
                size_t i = 0;
                while (i < L->p->nrules && strcmp(L->p->rules[i].id, must[k]))
                        i++;
                if (i == L->p->nrules || L->p->rules[i].decision != POLICY_DENY)
                        return tx_err(L->err, EINVAL, "policy '%s': no deny rule %s", L->file, must[k]);
        }
        if (!e->mass_delete_count || !e->mass_delete_min || !e->mass_delete_share || !e->max_file_size ||
            !e->lost_work_min)
                return tx_err(L->err, EINVAL, "policy '%s': every effect limit must be set", L->file);
        return 0;
}

int policy_parse_builtin(const char *name, const char *text, size_t len, struct policy **out,
                         struct txbox_error *err)
{
        struct policy *p = xcalloc(1, sizeof(*p));
        struct loader L = {.p = p, .file = name, .err = err, .builtin = true};
        int r = len > MAX_POLICY_FILE ? tx_err(err, EFBIG, "policy '%s': larger than 1 MiB", name)
                                      : parse_file(&L, text, len);

        if (r == 0)
                r = builtin_complete(&L);
        if (r < 0) {
                policy_free(p);
                return r;
        }
        p->file = xstrdup(name);
        policy_index(p);
        *out = p;
        return 0;
}

/* Which first bytes each rule's programs can start with, so that most rules are passed
 * over with one bit test instead of glob matching (this loop runs for every command). */
void policy_index(struct policy *p)
{
        p->first = xcalloc(p->nrules + 1, sizeof(*p->first));
        for (size_t k = 0; k < p->nrules; k++) {
                uint64_t *m = p->first[k];
                const char *const *pr = p->rules[k].programs;
                bool all = !pr;
                for (; pr && *pr; pr++)
                        for (const char *a = *pr; a; a = strchr(a, '|') ? strchr(a, '|') + 1 : NULL) {
                                unsigned char c = (unsigned char)a[0];
                                if (glob_special((char)c) || !c)
                                        all = true;
                                else
                                        m[c >> 6] |= 1ULL << (c & 63);
                        }
                if (all)
                        m[0] = m[1] = m[2] = m[3] = ~0ULL;
        }
}

const struct rule *policy_builtin_rule(const char *id)
{
        const struct policy *b = policy_builtin();
        for (size_t k = 0; k < b->nrules; k++)
                if (!strcmp(b->rules[k].id, id))
                        return &b->rules[k];
        return NULL;
}

/* A policy from a file's text; name for messages. */
static int load_text(const char *name, const char *text, size_t len, bool own_rules_only, struct policy **out,
                     bool *defaults_off, struct txbox_error *err)
{
        const struct policy *d = policy_builtin();
        int r;
        if (len > MAX_POLICY_FILE)
                return tx_err(err, EFBIG, "policy '%s': larger than 1 MiB", name);
        struct policy *p = xcalloc(1, sizeof(*p));
        p->eff = d->eff;
        struct loader L = {.p = p, .file = name, .err = err, .own_rules_only = own_rules_only, .defaults = d};
        r = parse_file(&L, text, len);

        if (r < 0) {
                policy_free(p);
                return r;
        }
        p->file = xstrdup(name);
        policy_index(p);
        if (defaults_off)
                *defaults_off = L.defaults_off;
        *out = p;
        return 0;
}

int policy_load(const char *file, struct policy **out, struct txbox_error *err)
{
        if (!file) {
                const struct policy *d = policy_builtin();
                struct policy *p = xcalloc(1, sizeof(*p));
                p->eff = d->eff;
                p->rules = xmalloc((d->nrules + 1) * sizeof(*p->rules));
                memcpy(p->rules, d->rules, d->nrules * sizeof(*p->rules));
                p->nrules = d->nrules;
                policy_index(p);
                *out = p;
                return 0;
        }
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_file_at(AT_FDCWD, file, MAX_POLICY_FILE, &text, &len);
        if (r < 0)
                return tx_err(err, -r, "policy '%s': %s%s", file, strerror(-r),
                              r == -EFBIG ? " (larger than 1 MiB)" : "");
        return load_text(file, text, len, false, out, NULL, err);
}

/* An untrusted workspace policy: the built-in one, with the file's own rules judged beside
 * it (never instead) and its effect limits counting only where they are stricter. */
static bool tightens_only(const struct policy *ws, bool defaults_off, const struct effects_cfg *d)
{
        const struct effects_cfg *e = &ws->eff;
        for (size_t k = 0; k < ws->nrules; k++)
                if (ws->rules[k].decision == POLICY_ALLOW)
                        return false;
        return !defaults_off && ws->sandbox.caches != POLICY_CACHES_LIST &&
               e->mass_delete_count <= d->mass_delete_count &&
                e->mass_delete_min <= d->mass_delete_min &&
               e->mass_delete_share <= d->mass_delete_share && e->max_file_size <= d->max_file_size &&
               e->lost_work_min <= d->lost_work_min;
}

static void take_stricter_effects(struct effects_cfg *base, const struct effects_cfg *ws)
{
#define STRICTER(f) base->f = ws->f < base->f ? ws->f : base->f
        STRICTER(mass_delete_count);
        STRICTER(mass_delete_min);
        STRICTER(mass_delete_share);
        STRICTER(max_file_size);
        STRICTER(lost_work_min);
#undef STRICTER
        if (ws->protect)
                base->protect = ws->protect; /* the built-in policy protects no globs of its own */
}

static int load_untrusted(const char *name, const char *text, size_t len, const char *hash,
                          struct policy **out, struct txbox_error *err)
{
        struct policy *base, *ws;
        bool off = false;
        int r = load_text(name, text, len, true, &ws, &off, err);

        if (r < 0)
                return r;
        if ((r = policy_load(NULL, &base, err)) < 0) {
                policy_free(ws);
                return r;
        }
        struct effects_cfg builtin_eff = base->eff;
        take_stricter_effects(&base->eff, &ws->eff);
        /* Hiding more and turning the caches off only take away; a list of caches would
         * make more of the home writable. */
        base->sandbox.hide = ws->sandbox.hide;
        if (ws->sandbox.caches == POLICY_CACHES_OFF)
                base->sandbox.caches = POLICY_CACHES_OFF;
        if (!tightens_only(ws, off, &builtin_eff))
                base->note =
                        xasprintf("the workspace policy '%s' is not trusted (sha256 %.12s...): it only adds "
                                  "restrictions, its allow rules, defaults: false, higher effect limits and "
                                  "its list of sandbox caches do not apply; run txbox trust to apply it as "
                                  "written",
                                  name, hash);
        base->file = xstrdup(name);
        base->tighten = ws;
        *out = base;
        return 0;
}

int policy_load_for(const char *workspace, const char *explicit_file, struct policy **out,
                    struct txbox_error *err)
{
        _cleanup_free_ char *text = NULL, *name = NULL;
        char hash[65];
        size_t len = 0;
        int r;

        if (explicit_file)
                return policy_load(explicit_file, out, err);
        if (!workspace || (r = policy_ws_read(workspace, &text, &len, err)) == -ENOENT)
                return policy_load(NULL, out, err);
        if (r < 0)
                return r;
        name = xasprintf("%s/.txbox/policy", workspace);
        policy_hash(text, len, hash);
        /* The user trusted this exact content here: it applies as written. */
        if (policy_trusted(workspace, hash))
                return load_text(name, text, len, false, out, NULL, err);
        return load_untrusted(name, text, len, hash, out, err);
}

const char *policy_note(const struct policy *p) { return p ? p->note : NULL; }

const char *policy_file(const struct policy *p) { return p ? p->file : NULL; }

void policy_sandbox_get(const struct policy *p, struct policy_sandbox *out)
{
        static const struct policy_sandbox none = {0};
        *out = p ? p->sandbox : none;
}

int policy_load_text(const char *name, const char *text, size_t len, struct policy **out,
                     struct txbox_error *err)
{
        return load_text(name, text, len, false, out, NULL, err);
}

char *policy_summary(const struct policy *p)
{
        size_t own = 0, allow = 0, defaults = 0;
        char ids[200] = "";

        for (size_t k = 0; k < p->nrules; k++) {
                if (p->rules[k].builtin) {
                        defaults++;
                        continue;
                }
                own++;
                if (p->rules[k].decision == POLICY_ALLOW && allow++ < 6)
                        snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s", allow > 1 ? ", " : "",
                                 p->rules[k].id);
        }
        return xasprintf("%zu rule%s of its own%s%s%s%s; %s", own, own == 1 ? "" : "s",
                         allow ? " (allowing: " : "", ids, allow > 6 ? ", ..." : "", allow ? ")" : "",
                         defaults ? "the built-in rules after them"
                                  : "without the built-in rules (defaults: false)");
}

void policy_free(struct policy *p)
{
        if (!p)
                return;
        free(p->rules);
        free(p->first);
        strvec_clear(&p->owned);
        for (size_t k = 0; k < p->nowned_arrays; k++)
                free(p->owned_arrays[k]);
        free(p->owned_arrays);
        free(p->file);
        free(p->note);
        policy_free(p->tighten);
        free(p);
}
