/* qflags: per-line query flags of a text list ("NAME TYPE,+do,+cd,-rd,ecs=192.0.2.0/24"). */
#ifndef DV_QFLAGS_H
#define DV_QFLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A line's last field may carry flags after a comma, each separated by a comma, no
 * spaces (doc/querylists.md, "Per-line flags"): +do (EDNS, DNSSEC OK), +cd, +ad, +rd,
 * -rd, +edns, +nsid (EDNS option 3, empty), ecs=ADDR/PREFIX (EDNS Client Subnet,
 * RFC 7871: family, source prefix, scope 0, the address cut to the prefix). dnsperf
 * reads "A,+do" as a type and rejects the line ("invalid qtype"), so a list with flags
 * is never misread there as one without.
 */
typedef struct dv_qflags {
	uint8_t set2, clear2; /* header octet 2 bits set / cleared (RD) */
	uint8_t set3;         /* header octet 3 bits set (AD, CD) */
	bool edns, dnssec_ok; /* an OPT RR (with DO) even when the list options have none */
	uint8_t opts[48];     /* EDNS options of the line, wire form */
	uint16_t opts_len;
} dv_qflags_t;

/*
 * Parse FLAGS (p, len: the text after the first comma, "+do,+cd"). 0, or -EINVAL with
 * msg naming the flag and why.
 */
int dv_qflags_parse(const char *p, size_t len, dv_qflags_t *f, char *msg, size_t msgsz);

/*
 * Apply f to message m, whose header and question (w octets) are written with the
 * list's header: header bits, then the OPT RR written at m + w: the list's (list_opt,
 * list_opt_len octets, 0 when it has none) or one with payload size 1232, with the
 * line's DO bit and its options after the list's. Returns the message's new length,
 * or 0 when the options would pass max_opts octets in all.
 */
size_t dv_qflags_apply(const dv_qflags_t *f, const uint8_t *list_opt, size_t list_opt_len,
                       size_t max_opts, uint8_t *m, size_t w);

#endif
