/* Loading libcurl at run time (see curlapi.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base/error.h"
#include "base/macros.h"
#include "faces/curlapi.h"

struct curl_api curl_api;

int curl_api_load(struct txbox_error *err)
{
        static void *lib;
        static const struct {
                const char *name;
                size_t off;
        } syms[] = {
                {"curl_global_init", offsetof(struct curl_api, global_init)},
                {"curl_global_cleanup", offsetof(struct curl_api, global_cleanup)},
                {"curl_easy_init", offsetof(struct curl_api, easy_init)},
                {"curl_easy_setopt", offsetof(struct curl_api, easy_setopt)},
                {"curl_easy_perform", offsetof(struct curl_api, easy_perform)},
                {"curl_easy_cleanup", offsetof(struct curl_api, easy_cleanup)},
                {"curl_easy_getinfo", offsetof(struct curl_api, easy_getinfo)},
                {"curl_easy_strerror", offsetof(struct curl_api, easy_strerror)},
                {"curl_slist_append", offsetof(struct curl_api, slist_append)},
                {"curl_slist_free_all", offsetof(struct curl_api, slist_free_all)},
        };

        if (lib)
                return 0;
        void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return tx_err(err, ENOENT, "cannot load libcurl (%s): install it (apt-get install libcurl4)",
                              dlerror());
        for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
                void *f = dlsym(h, syms[i].name);
                if (!f) {
                        dlclose(h);
                        return tx_err(err, ENOENT, "libcurl.so.4 lacks %s: install a current libcurl4",
                                      syms[i].name);
                }
                /* POSIX guarantees that a function pointer survives a trip through void *. */
                memcpy((char *)&curl_api + syms[i].off, &f, sizeof(f));
        }
        lib = h;
        return 0;
}
