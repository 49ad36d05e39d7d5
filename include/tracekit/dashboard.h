/*
 * tracekit/dashboard.h — the fleet dashboard (`tracekit serve --ui`, docs/dashboard.md): read-only
 * HTML pages, SVG pictures and a JSON API over a fleet store, answered per request, independent of
 * any HTTP server (cli/serve.c wires it to libmicrohttpd).
 *
 * Every page and picture is rendered here, on the server, by the library's own writers (flame graphs
 * by tk_write_flamegraph); the HTML links one stylesheet and one script, both served from here
 * (/static/), so a Content-Security-Policy of default-src 'self' with no inline script holds. Every
 * string from the store (function names, versions, devices come from uploads) is escaped for where
 * it goes: HTML text and attributes, SVG, URLs, JSON.
 *
 * /api/stats and /api/top answer exactly what `tracekit stats --db --json` and
 * `tracekit top-hangs --json` (top-diagnostics --kind K) print for the same filters
 * (tk_store_groups_write_json, tk_store_hangs_write_json).
 *
 * Part of libtracekit-store.
 */
#ifndef TRACEKIT_DASHBOARD_H
#define TRACEKIT_DASHBOARD_H

#include <stddef.h>

#include "tracekit/alert.h"
#include "tracekit/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A request's query argument by name (already URL-decoded), or NULL when absent. */
typedef const char *(*tk_dashboard_arg_fn)(void *ctx, const char *name);

typedef struct tk_dashboard_response {
	unsigned status;         /* 200, 400, 404, 500 */
	const char *type;        /* Content-Type */
	const char *csp;         /* the Content-Security-Policy to send with it */
	const char *disposition; /* Content-Disposition (downloads), or NULL */
	char *body;              /* malloc'd; free with tk_dashboard_response_free */
	size_t n;
	char csp_buf[256]; /* where csp points when it is made for this answer (an SVG's own script hash) */
} tk_dashboard_response;

typedef struct tk_dashboard_options {
	const tk_alert_rules *rules; /* shown on the pages (may be NULL) */
	double now;                  /* the present, Unix seconds (for since=) */
} tk_dashboard_options;

/* Answer GET path?args over store s. Always fills r (an error page or message on failure) and
 * returns its status. */
unsigned tk_dashboard_get(tk_store *s, const tk_dashboard_options *o, const char *path, tk_dashboard_arg_fn arg,
                          void *ctx, tk_dashboard_response *r);
void tk_dashboard_response_free(tk_dashboard_response *r);

#ifdef __cplusplus
}
#endif
#endif
