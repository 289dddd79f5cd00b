/* libcurl, loaded only by the verb that needs it (txbox agent): linked into every txbox
 * process it would bring about thirty shared libraries and ~12 ms of start-up to each
 * transaction, hook call and MCP server start.  Include this instead of <curl/curl.h>; the
 * curl_* names then go through the table that curl_api_load() fills. */
#ifndef TXBOX_CURLAPI_H
#define TXBOX_CURLAPI_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

struct txbox_error;

struct curl_api {
        CURLcode (*global_init)(long flags);
        void (*global_cleanup)(void);
        CURL *(*easy_init)(void);
        CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
        CURLcode (*easy_perform)(CURL *curl);
        void (*easy_cleanup)(CURL *curl);
        CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
        const char *(*easy_strerror)(CURLcode code);
        struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
        void (*slist_free_all)(struct curl_slist *list);
};

extern struct curl_api curl_api;

/* dlopen libcurl.so.4 once; -ENOENT with a message saying what to install when missing. */
int curl_api_load(struct txbox_error *err);

#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (curl_api.global_init)
#define curl_global_cleanup (curl_api.global_cleanup)
#define curl_easy_init (curl_api.easy_init)
#define curl_easy_setopt (curl_api.easy_setopt)
#define curl_easy_perform (curl_api.easy_perform)
#define curl_easy_cleanup (curl_api.easy_cleanup)
#define curl_easy_getinfo (curl_api.easy_getinfo)
#define curl_easy_strerror (curl_api.easy_strerror)
#define curl_slist_append (curl_api.slist_append)
#define curl_slist_free_all (curl_api.slist_free_all)

#endif
