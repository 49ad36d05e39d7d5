/*
 * Functions of a profile for writers whose formats list functions separately from call sites
 * (speedscope's shared frames, pprof's Function table). A function is what transforms call one
 * (transform.h): the frame's label plus its binary's name, so every address inside one function
 * maps to one entry. Internal (not installed).
 */
#ifndef TK_WRITE_FUNCTAB_H
#define TK_WRITE_FUNCTAB_H

#include <stdint.h>

#include "tracekit/profile.h"
#include "util/hidx.h"

typedef struct tk_functab {
	uint32_t *of_frame; /* frame id -> function index (every frame of the profile) */
	tk_frame_id *first; /* function index -> the first frame seen of it (its name, file, line) */
	uint32_t n;
	tk_hidx idx;
} tk_functab;

void tk_functab_build(tk_functab *ft, const tk_profile *p);
void tk_functab_free(tk_functab *ft);

#endif
