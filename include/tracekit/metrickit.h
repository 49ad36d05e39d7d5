/*
 * tracekit/metrickit.h — Apple's MetricKit payloads (MXDiagnosticPayload, MXMetricPayload).
 *
 * The reader (tk_reader_metrickit, found by content through tk_read_path) turns each diagnostic into
 * an event of the profile (profile.h) and each metric payload into a TK_EVENT_MARKER event named
 * "metrics"; docs/metrickit.md lists every field and where it lands. What is declared here is what
 * consumers of those events need: MetricKit's formatted measurements ("4 sec", "2.5 sec", "20 ms",
 * "1,000 MB", "10 ms per s") read exactly, and the histograms a metric payload carries.
 *
 * Histogram attributes. A metric payload's histogram (histogrammedAppHangTime,
 * histogrammedTimeToFirstDraw, histogrammedApplicationResumeTime, …) is kept on its event as the
 * string attribute "histogram.NAME", NAME being the key without "histogrammed" (and Apple's stray
 * "Key" suffix) in lower-case words joined by '.': "histogram.app.hang.time",
 * "histogram.time.to.first.draw", "histogram.application.resume.time". Its text is
 *     UNIT;START,END,COUNT;START,END,COUNT;…
 * with UNIT "ns", "bytes", "ratio" (parts per 10^9) or "count" and the bounds as integers in it, in
 * the payload's bucket order — exact, so the attribute can be stored and read back anywhere.
 */
#ifndef TRACEKIT_METRICKIT_H
#define TRACEKIT_METRICKIT_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MetricKit payloads: one, a JSON array of them, or JSON Lines; a bare callStackTree too. */
extern const tk_reader tk_reader_metrickit;

typedef enum tk_mx_kind {
	TK_MX_COUNT = 1, /* a plain number ("3", "2 bars") */
	TK_MX_TIME,      /* value in ns: "4 sec", "2.5 sec", "20 secs.", "20 ms", "1 min" */
	TK_MX_BYTES,     /* value in bytes: "2,000 byte", "1,000 MB" (decimal kB/MB/GB, binary KiB/MiB/GiB) */
	TK_MX_RATIO,     /* value in parts per 10^9: "10 ms per s" = 0.01 */
} tk_mx_kind;

typedef struct tk_mx_value {
	tk_mx_kind kind;
	uint64_t value;
} tk_mx_value;

/* Read one formatted measurement (n bytes at s, no NUL needed): digits with ',' thousands groups and
 * an optional fraction, a space, a unit. Exact: no floating point for time and sizes, and a fraction
 * finer than the base unit is refused. Returns 0, or -1 when the text is not such a measurement. */
int tk_mx_measurement(const char *s, size_t n, tk_mx_value *out);

typedef struct tk_mx_bucket {
	uint64_t start, end, count; /* bounds in the histogram's unit, samples in [start, end] */
} tk_mx_bucket;

/* The attribute text for buckets (malloc'd). */
char *tk_mx_histogram_format(const tk_mx_bucket *b, size_t n, tk_mx_kind kind);
/* Parse an attribute text back: *b malloc'd (free it), *n buckets. Returns 0 or -1 if malformed. */
int tk_mx_histogram_parse(const char *s, tk_mx_bucket **b, size_t *n, tk_mx_kind *kind);
/* The q-quantile (0 <= q <= 1) of the samples the buckets count, interpolated linearly within the
 * bucket that holds it: with buckets sorted by start and N = Σ count, the rank r = q·N falls in the
 * first bucket whose running count reaches r, at start + (end − start)·(r − before)/count. NAN when
 * the histogram is empty. An estimate: MetricKit gives only the buckets. */
double tk_mx_histogram_quantile(const tk_mx_bucket *b, size_t n, double q);
/* Σ over buckets of count × (the part of the bucket at or above min, at its midpoint): the total of
 * the samples at least min long, estimated from the buckets (used for the hang rate, min = 250 ms). */
double tk_mx_histogram_sum_above(const tk_mx_bucket *b, size_t n, uint64_t min);

#ifdef __cplusplus
}
#endif
#endif
