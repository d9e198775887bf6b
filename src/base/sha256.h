/* sha256: SHA-256 (FIPS 180-4) of query-list files, recorded in results metadata. */
#ifndef DV_SHA256_H
#define DV_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define DV_SHA256_LEN 32

typedef struct dv_sha256 {
	uint32_t h[8];
	uint64_t total;  /* bytes hashed so far */
	uint8_t buf[64]; /* pending partial block */
	size_t n;        /* bytes in buf */
} dv_sha256_t;

void dv_sha256_init(dv_sha256_t *c);
void dv_sha256_update(dv_sha256_t *c, const void *data, size_t len);
void dv_sha256_final(dv_sha256_t *c, uint8_t out[DV_SHA256_LEN]);
/* Lower-case hex of a digest into hex (65 bytes with the NUL). */
void dv_sha256_hex(const uint8_t d[DV_SHA256_LEN], char hex[65]);
/*
 * Hash the bytes of PATH into hex (65 bytes). "-" (stdin) cannot be hashed again:
 * hex becomes "" and 0 is returned. Returns 0 or a negative errno with err
 * filled ("FILE: why").
 */
int dv_sha256_file(const char *path, char hex[65], dv_err_t *err);

#endif
