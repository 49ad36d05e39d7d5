/*
 * tracekit/apple_report.h — Apple's diagnostic reports: `.ips` JSON crash reports, legacy `.crash` text,
 * spindump hang / microstackshot text (`.spin`, `.hang`, cpu_resource and disk-write `.ips`).
 *
 * A report is read once into a tk_apple_report (what the report says, frame by frame, with its images),
 * which then goes two ways:
 *   - into a profile (tk_apple_report_to_profile; the registry's readers `ips`, `crash` and `spindump` do
 *     this): one event per report (crash → TK_EVENT_CRASH, hang → TK_EVENT_HANG, cpu usage and
 *     wakeups → TK_EVENT_CPU_EXCEPTION, disk writes → TK_EVENT_DISK_WRITE) with the shared
 *     attributes (app, app.version, app.build, bundle, device, os, arch, process, pid, incident,
 *     exception.type, exception.code, signal, termination.reason), each thread's stack a sample
 *     (weight 1 for crash reports, the sample count for spindump);
 *   - through tk_apple_report_symbolicate (names, files and lines from dSYMs) to the writers, which give
 *     the report back in the form Apple's tools write it (lib/write/report_*.c).
 * Format notes and the kinds verified on real files: docs/apple-reports.md.
 */
#ifndef TRACEKIT_APPLE_REPORT_H
#define TRACEKIT_APPLE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"
#include "tracekit/read.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_apple_report_format {
	TK_APPLE_IPS = 1,  /* .ips: a JSON header line, then a JSON body (bug_type 309 crash …) */
	TK_APPLE_CRASH,    /* legacy / translated text crash report ("Thread N Crashed:") */
	TK_APPLE_SPINDUMP, /* spindump text: hangs, microstackshots (cpu usage, wakeups, disk writes) */
} tk_apple_report_format;

/* One name of a resolved inline chain, innermost first. */
typedef struct tk_apple_report_sym {
	char *function;
	char *file; /* NULL if unknown */
	uint32_t line;
	int inlined; /* all but the outermost */
} tk_apple_report_sym;

typedef struct tk_apple_report_frame {
	uint32_t image;  /* 1-based index into images; 0 = none */
	uint64_t addr;   /* runtime address */
	char *symbol;    /* as the report names it; NULL if unnamed */
	uint64_t symoff; /* offset into symbol (symbolLocation, "+ N") */
	int has_symoff;
	char *file; /* as the report says (sourceFile); NULL */
	uint32_t line;
	uint64_t count; /* spindump: samples in which the frame appears; 1 for crash reports */
	uint32_t depth; /* spindump: tree depth, 1 for a root; crash reports: 0 */
	int kernel;     /* spindump `*` frame */
	size_t line_no; /* text formats: index into lines of the line that holds the frame; else SIZE_MAX */
	size_t sym_at,
	    sym_end; /* text formats: the bytes of that line naming the frame (what symbolication replaces) */
	/* filled by tk_apple_report_symbolicate; sym and its strings live in the report's sym_pool (freed
	 * with the report: never free them one by one) */
	tk_apple_report_sym *sym;
	size_t nsym;
	int sym_symtab; /* only the symbol table named it: sym_off is the offset into that symbol */
	uint64_t sym_off;
} tk_apple_report_frame;

typedef struct tk_apple_report_thread {
	uint64_t id;
	char *name, *queue;
	int crashed;    /* triggered / "Crashed:" */
	size_t process; /* index into processes */
	tk_apple_report_frame *frames;
	size_t nframes;
	size_t json_index; /* .ips: index in threads[] */
} tk_apple_report_thread;

typedef struct tk_apple_report_image {
	uint64_t base, size;             /* size 0 if unknown */
	char *name, *path, *uuid, *arch; /* uuid upper-case with dashes, NULL if none */
	/* filled by tk_apple_report_symbolicate: 1 resolved frames from a dSYM, -1 no symbols found */
	int symbols;
	char *why; /* with symbols == -1: why (one line) */
} tk_apple_report_image;

typedef struct tk_apple_report_process {
	char *name;
	int64_t pid;
	size_t first_image, nimages; /* spindump: the process's own Binary Images */
} tk_apple_report_process;

typedef struct tk_apple_report tk_apple_report;
struct tk_apple_report {
	tk_apple_report_format format;
	const char *name; /* input name for messages */
	tk_event_kind kind;
	char *event_name; /* "crash", "hang", "cpu usage", bug_type … */
	char *bug_type;
	/* event attributes: app, app.version, … in the order found (key, value pairs) */
	char **attr;
	size_t nattr;
	double wall;           /* Unix seconds; NAN */
	double duration;       /* seconds; NAN */
	size_t target_process; /* spindump: the process the report is about; SIZE_MAX none */
	tk_apple_report_thread *threads;
	size_t nthreads;
	/* .ips: lastExceptionBacktrace (the frames of an uncaught exception), NULL if none; not a thread
	 * of the profile, but symbolicated and written ("Last Exception Backtrace:") */
	tk_apple_report_thread *leb;
	tk_apple_report_image *images;
	size_t nimages;
	tk_apple_report_process *processes;
	size_t nprocesses;
	/* text formats: every line of the input, for writing it back with only the frames changed */
	char **lines;
	size_t nlines;
	/* .ips: the parsed header and body (jansson objects), for the writers */
	void *json_header, *json_body;
	/* .ips read with TK_APPLE_REPORT_TEXT_ONLY by the fast scanner: json_body has every
	 * threads[].frames and usedImages emptied (their contents are in threads and images), so
	 * tk_apple_report_write_ips refuses the report; 0 otherwise */
	int json_partial;
	/* the names symbolication gave the frames: chunks whose first word links the next */
	void *sym_pool;
};

/* Read a report from in (format sniffed; gzip undone by the stream). Returns NULL with err naming
 * the input, the place and the problem. */
tk_apple_report *tk_apple_report_read(tk_input *in, tk_error *err);
tk_apple_report *tk_apple_report_read_path(const char *path, tk_error *err);
/* The same with flags. TK_APPLE_REPORT_TEXT_ONLY: the report is for the text writer (and profiles),
 * not tk_apple_report_write_ips; an .ips body's frames and images are then read by a scanner instead
 * of jansson's tree (several times faster on big reports), with the same answers and errors (any
 * input the scanner does not take whole goes through jansson). TK_APPLE_REPORT_IF_REPORT: an input
 * that is not a report (empty, or not sniffed as one) gives NULL with err->msg empty (a file that
 * tk_apple_report_list_ex listed without opening it, to be skipped). */
enum { TK_APPLE_REPORT_TEXT_ONLY = 1, TK_APPLE_REPORT_IF_REPORT = 2 };
tk_apple_report *tk_apple_report_read_ex(tk_input *in, unsigned flags, tk_error *err);
tk_apple_report *tk_apple_report_read_path_ex(const char *path, unsigned flags, tk_error *err);
void tk_apple_report_free(tk_apple_report *r);
/* A batch's reader: tk_apple_report_read_path_ex with the same answers and errors, but a plain file
 * is read with one open, fstat, read and close into a buffer kept for the next report (and opened by
 * its name in the directory of the previous one when they share it). Standard input, gzip'd files
 * and files over 64 MB go through tk_input as before. One per thread. */
typedef struct tk_apple_report_reader tk_apple_report_reader;
tk_apple_report_reader *tk_apple_report_reader_new(void);
void tk_apple_report_reader_free(tk_apple_report_reader *rd);
tk_apple_report *tk_apple_report_reader_read(tk_apple_report_reader *rd, const char *path, unsigned flags,
                                             tk_error *err);
/* The format of the first bytes of an input (as tk_input_head gives them), 0 if not a report. */
tk_apple_report_format tk_apple_report_sniff(const unsigned char *head, size_t n);

/* Expand inputs for batch work: files as given, directories searched recursively for the files that
 * are reports (by content; others are skipped), in name order. *out is malloc'd (free each and it).
 * Returns 0, or -1 with err when a path does not exist or a directory cannot be read. */
int tk_apple_report_list(const char *const *paths, size_t n, char ***out, size_t *nout, tk_error *err);
/* The same, but the files found in directories are not opened (a batch then opens each report once):
 * *lazy (malloc'd, *nout bytes) is 1 for those; read them with TK_APPLE_REPORT_IF_REPORT and skip
 * the ones that are not reports. Files given as paths are listed as they are (lazy 0). */
int tk_apple_report_list_ex(const char *const *paths, size_t n, char ***out, unsigned char **lazy, size_t *nout,
                            tk_error *err);

/* Fill p (unit: samples) from r, see above. Returns 0, or -1 with err. */
int tk_apple_report_to_profile(const tk_apple_report *r, tk_profile *p, tk_error *err);

/* The value of an attribute of the report's event (NULL if unset). */
const char *tk_apple_report_attr(const tk_apple_report *r, const char *key);

/* Readers for the registry. */
extern const tk_reader tk_reader_ips;
extern const tk_reader tk_reader_crash;
extern const tk_reader tk_reader_spindump;

/* ---- symbolication (lib/symbol/report_sym.c) ---- */
typedef struct tk_symbolicator tk_symbolicator;
typedef struct tk_apple_report_sym_stats {
	size_t frames;     /* frames with an address in an image */
	size_t resolved;   /* named from a dSYM or binary */
	size_t unresolved; /* left as the report has them */
} tk_apple_report_sym_stats;

/* The images of many reports: each (UUID, arch) is asked of the symbolicator once, its handle (or
 * why there is none) kept for the next reports, so a batch pays the search and the open once per
 * image. One per thread, like the symbolicator it uses (which must outlive it). */
typedef struct tk_apple_report_symbols tk_apple_report_symbols;
tk_apple_report_symbols *tk_apple_report_symbols_new(tk_symbolicator *s);
void tk_apple_report_symbols_free(tk_apple_report_symbols *rs);

/* Look every frame up in the images' dSYMs (by UUID and arch). The first frame of each thread is
 * its PC and is looked up as is; the others are return addresses, looked up at addr − 1 (the
 * caller-frame rule; in a spindump tree, frames without children are PCs). Frames of images with
 * no symbols keep what the report says; such images get symbols = -1 and why ("no dSYM or binary
 * with UUID … in the search paths"). Returns 0 (-1 with err is reserved for failures other than a
 * missing image). */
int tk_apple_report_symbolicate(tk_apple_report *r, tk_apple_report_symbols *rs, tk_apple_report_sym_stats *st,
                                tk_error *err);

/* ---- writers (lib/write/report_*.c) ---- */
/* The report as Apple's tools print it: for .ips and .crash the crash-report text Xcode writes
 * (header, exception information, "Thread N name:", "Thread N Crashed:", frame lines, thread state,
 * "Binary Images:"); for spindump the same text with the frames named. Frames resolved from a
 * dSYM read `symbol (in Binary) (File.swift:LINE)`, inlined frames each on a line of their own.
 * Returns 0, or -1 with err on a write error. */
int tk_apple_report_write_text(FILE *out, const tk_apple_report *r, tk_error *err);
/* The bytes tk_apple_report_write_text writes for an .ips or .crash report, appended to *buf (*len
 * bytes used of *cap, grown with realloc; the caller frees it): a batch keeps one buffer for its
 * reports and writes it when it likes. Returns 0, or -1 with err (other formats: write those with
 * tk_apple_report_write_text). */
int tk_apple_report_text_append(const tk_apple_report *r, char **buf, size_t *len, size_t *cap, tk_error *err);
/* Spindump text with the frames named (what tk_apple_report_write_text does for a spindump report):
 * `COUNT  function (in Binary) (File:LINE) (Binary + off) [0xaddr]` for a resolved frame, the rest
 * of every line as it was. */
int tk_apple_report_write_spindump(FILE *out, const tk_apple_report *r, tk_error *err);
/* .ips only: the header line and the JSON body with symbol, symbolLocation, sourceFile and
 * sourceLine filled for resolved frames (inlined frames as Apple writes them: extra frames with
 * "inline": true before their caller). */
int tk_apple_report_write_ips(FILE *out, const tk_apple_report *r, tk_error *err);

#ifdef __cplusplus
}
#endif
#endif
