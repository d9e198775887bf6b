/* results_fields: the results file's field tables, which its writer (results_write.c) and
 * reader (results_read.c) both walk; private to those two. */
#ifndef DV_RESULTS_FIELDS_H
#define DV_RESULTS_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results/results_json.h"

/*
 * One table per JSON object section: its plain keys in file order, each with the
 * C member it holds. The writer and the reader both walk the same table, so a
 * key is declared once. Integers of any unsigned width, and int or bool flags,
 * are loaded and stored by their size. Keys that are not plain (arrays,
 * sub-objects, hex, the counters) are written and read by the section's code.
 */
typedef enum dv_jtype {
	J_UINT,  /* integer from 0 to max */
	J_DBL,   /* number; non-finite is written as null, null reads back as NaN */
	J_BOOL,  /* true or false (the member is a bool or an int flag) */
	J_STR,   /* string or null; char *, malloc'ed when read */
	J_LABEL, /* the same, but reading requires a string */
	J_TIME,  /* ISO 8601 UTC text of a uint64_t ns member: written only (the ns have a key) */
	J_KIND,  /* dv_pass_kind_t by name */
	J_END,   /* dv_end_reason_t by name */
	J_MODE,  /* the bool stream of a dv_run_config_t and its tp.kind: "udp", "tcp", "dot", "doh"
	          */
	J_CLOCK, /* dv_pass_clock_t by name (dv_pass_clock_name); null: not recorded */
} dv_jtype_t;

typedef struct dv_jfield {
	const char *key;
	dv_jtype_t type;
	size_t off;   /* of the member in the section's struct */
	size_t size;  /* of the member */
	uint64_t max; /* J_UINT: the largest value read */
	bool opt;     /* added after version 1: may be absent when reading (then 0/NULL) */
} dv_jfield_t;

/* A table and its length; TABLE(t) passes both to the walkers. */
typedef struct dv_jtable {
	const dv_jfield_t *f;
	size_t n;
} dv_jtable_t;
#define TABLE(t) (t).f, (t).n

/* Each object section's table (results_fields.c says where each sits in the file). */
extern const dv_jtable_t dv_jf_meta, dv_jf_tool, dv_jf_host, dv_jf_config, dv_jf_run, dv_jf_qopt,
    dv_jf_target, dv_jf_list, dv_jf_list_input, dv_jf_replay_opt, dv_jf_pass_replay,
    dv_jf_pass_capacity, dv_jf_cap_step, dv_jf_pass, dv_jf_pass_xdp, dv_jf_udp, dv_jf_interval,
    dv_jf_rank, dv_jf_qtype_other, dv_jf_status;

/* An unsigned integer, int or bool member of `size` octets (1, 2, 4 or 8) loaded or stored. */
uint64_t dv_jf_load_uint(const void *p, size_t size);
void dv_jf_store_uint(void *p, size_t size, uint64_t v);

#endif
