/*
 * tracekit/transform.h — profile → profile transforms (the Instruments "Call Tree" data-mining options).
 *
 * A transform never edits its input: tk_transform() returns a new profile holding only what the
 * transforms keep, so every consumer (call trees, top functions, folded stacks, and any future
 * Gecko / speedscope / pprof writer) gets the same filtering for free. Work and memory are linear
 * in the number of *distinct* stacks, never in the number of samples.
 *
 * Function identity. Two frames are "the same function" when their labels and binary names are
 * equal. The label is the frame's symbol name, or "0x" + lowercase hex of its address when it has
 * none (tk_frame_label). The binary is compared by name (tk_binary.name), so the same dylib in two
 * processes, or two call sites inside one function, count as one function.
 *
 * Function patterns. A pattern names a function either by label alone ("objc_msgSend", which
 * matches that label in any binary) or by binary and label joined with a backquote, as dtrace
 * writes them: "libobjc.A.dylib`objc_msgSend". Matching is exact (no globs: C++ and Objective-C
 * names are full of '*' and '['). A frame without a binary only matches a pattern without one.
 *
 * The specs are applied in the order given; each one sees the output of the previous one. Thread
 * and process filters are the exception: all TK_TX_THREAD specs together form one filter (a thread
 * is kept if any of them matches), likewise all TK_TX_PROCESS specs, and both run first.
 */
#ifndef TRACEKIT_TRANSFORM_H
#define TRACEKIT_TRANSFORM_H

#include <stddef.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_transform_kind {
	/* Keep only samples whose stack contains the function, re-rooted at its first (outermost)
	 * occurrence: frames above it are dropped, recursion below it is kept. Samples without the
	 * function are dropped, and so are threads left with no samples. */
	TK_TX_FOCUS,
	/* Drop samples whose stack contains the function anywhere. */
	TK_TX_EXCLUDE,
	/* Merge the function into its caller ("charge to caller"): every frame of it is removed from
	 * every stack, so its callees hang from its caller and its self weight becomes the caller's. A
	 * sample whose only frames were merged keeps its weight on the thread itself (an empty stack),
	 * so thread totals never change. */
	TK_TX_MERGE,
	/* The same for every frame of one binary (pattern = binary name, e.g. "libsystem_kernel.dylib",
	 * or its full path when the pattern starts with '/'):
	 * runs of that binary's frames disappear and their weight goes to the nearest caller outside
	 * it ("charge library to caller"). */
	TK_TX_MERGE_BINARY,
	/* TK_TX_MERGE_BINARY for every system binary (see tk_binary_is_system); pattern unused. This
	 * is Instruments' "Hide System Libraries". */
	TK_TX_MERGE_SYSTEM,
	/* Collapse directly repeated frames of the same function (f → f → f becomes f), as Instruments'
	 * "Flatten Recursion". Indirect recursion (f → g → f) is left alone. Pattern unused. */
	TK_TX_FLATTEN_RECURSION,
	/* Keep threads whose tid (decimal, or hex with 0x) or name equals the pattern. */
	TK_TX_THREAD,
	/* Keep threads whose pid (decimal) or process name equals the pattern. */
	TK_TX_PROCESS,
	/* Merge every unsymbolicated frame (no symbol, or a symbol that is only a hex address) into its
	 * caller, as Instruments' "Hide Missing Symbols". Pattern unused. */
	TK_TX_MERGE_UNSYMBOLICATED,
	/* Keep the threads owned by event N (pattern: its id, 1-based, as `tracekit records` and
	 * docs/metrickit.md number them): one MetricKit diagnostic, one record. Like the thread filter,
	 * all TK_TX_EVENT specs form one filter and run first. */
	TK_TX_EVENT,
	/* Keep the threads owned by events of a kind (pattern: a tk_event_kind name or "cpu", "disk");
	 * all TK_TX_EVENT_KIND specs form one filter, ANDed with the others. */
	TK_TX_EVENT_KIND,
} tk_transform_kind;

typedef struct tk_transform_spec {
	tk_transform_kind kind;
	const char *pattern; /* see each kind; may be NULL where unused */
} tk_transform_spec;

/* Apply the specs in order and return a new profile (the input is untouched), or NULL with err set
 * (an empty pattern where one is needed, an unknown kind). The new profile keeps the unit, the
 * metadata, thread identities and time bounds, and the events whose threads are kept (with their
 * attributes and thread roles; events without threads are kept unless an event filter is given). */
tk_profile *tk_transform(const tk_profile *in, const tk_transform_spec *specs, size_t n, tk_error *err);

/* Parse "BINARY`LABEL" or "LABEL" and test a frame against it (exposed for tests and writers). */
int tk_frame_matches(const tk_profile *p, tk_frame_id f, const char *pattern);

/* True for binaries that are part of the OS rather than the app: paths under /System/, /usr/lib/,
 * /usr/libexec/, /Library/Apple/, /private/preboot/Cryptexes/ and /Developer/ (the developer disk
 * image), and dyld. A binary with no path is judged by name: "dyld" and names starting "libsystem_"
 * or "libdispatch" / "libobjc" count as system. */
int tk_binary_is_system(const tk_profile *p, tk_binary_id b);

#ifdef __cplusplus
}
#endif
#endif
