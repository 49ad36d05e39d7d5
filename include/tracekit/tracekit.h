/*
 * tracekit.h — the whole public API of libtracekit (the monitor library, libtracekit-monitor, has
 * its own header, monitor.h, and no dependency on this one).
 *
 * Data flows one way: a reader fills a tk_profile (read.h; monitor sessions' records become its events),
 * transforms make new profiles from it (transform.h; symbolication and ELF naming in symbol.h are
 * profile-to-profile passes too), and writers and the call-tree builder (calltree.h) read it.
 * Statistics across many profiles and reports are in stats.h, the fleet store of reports in
 * store.h. Every function that can fail reports through a tk_error (error.h) and never prints or
 * exits.
 */
#ifndef TRACEKIT_H
#define TRACEKIT_H

#include "tracekit/apple_report.h"
#include "tracekit/calltree.h"
#include "tracekit/error.h"
#include "tracekit/profile.h"
#include "tracekit/read.h"
#include "tracekit/stats.h"
#include "tracekit/store.h"
#include "tracekit/symbol.h"
#include "tracekit/toc.h"
#include "tracekit/transform.h"
#include "tracekit/version.h"
#include "tracekit/write.h"

#endif
