/* util: error values, clocks, strict number parsing, argv copies, file hashes for all modules. */
#include "config.h"

#include "base/util.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <ldns/ldns.h>
#include <ldns/sha2.h>

int dv_err_set(dv_err_t *err, int code, const char *fmt, ...)
{
	if (err != NULL) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * DV_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t dv_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t dv_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int64_t dv_wall_minus_mono_ns(void)
{
	uint64_t narrowest = UINT64_MAX;
	int64_t offset = 0;
	unsigned i;

	for (i = 0; i < DV_CLOCK_PAIR_TRIES && narrowest > DV_CLOCK_PAIR_NS; i++) {
		uint64_t m1 = dv_now_ns(), w = dv_wall_ns(), m2 = dv_now_ns();
		if (m2 - m1 < narrowest) {
			narrowest = m2 - m1;
			offset = (int64_t)w - (int64_t)(m1 + (m2 - m1) / 2);
		}
	}
	return offset;
}

int dv_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int dv_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0' || !isfinite(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int dv_parse_duration_ns(const char *s, uint64_t *out_ns)
{
	char buf[64];
	size_t len;
	double scale = 1e9, v;
	int rc;

	if (s == NULL)
		return -EINVAL;
	len = strlen(s);
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	if (len > 2 && strcmp(buf + len - 2, "ms") == 0) {
		scale = 1e6;
		buf[len - 2] = '\0';
	} else if (len > 2 && strcmp(buf + len - 2, "us") == 0) {
		scale = 1e3;
		buf[len - 2] = '\0';
	} else if (len > 1 && buf[len - 1] == 's') {
		buf[len - 1] = '\0';
	}
	rc = dv_parse_double(buf, 0.0, 1e300, &v);
	if (rc != 0)
		return rc;
	if (v * scale > DV_DURATION_MAX_S * 1e9)
		return -ERANGE;
	*out_ns = (uint64_t)llround(v * scale);
	return 0;
}

char **dv_argv_copy(int argc, char *const *argv)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	int i;

	if (v == NULL)
		return NULL;
	for (i = 0; i < argc; i++) {
		v[i] = strdup(argv[i]);
		if (v[i] == NULL) {
			dv_argv_free(v);
			return NULL;
		}
	}
	return v;
}

void dv_argv_free(char **argv)
{
	if (argv == NULL)
		return;
	for (char **a = argv; *a != NULL; a++)
		free(*a);
	free(argv);
}

char *dv_argv_quote(int argc, char *const *argv)
{
	size_t len = 1;
	char *s, *p;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) * 4 + 3;
	s = malloc(len);
	if (s == NULL)
		return NULL;
	p = s;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool quote = *a == '\0' || strpbrk(a, " \t'\"\\$`*?;&|<>()") != NULL;
		if (i > 0)
			*p++ = ' ';
		if (quote)
			*p++ = '\'';
		for (; *a; a++) {
			if (quote && *a == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *a;
			}
		}
		if (quote)
			*p++ = '\'';
	}
	*p = '\0';
	return s;
}

int dv_sha256_file(const char *path, char hex[65], dv_err_t *err)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t buf[65536], d[LDNS_SHA256_DIGEST_LENGTH];
	ldns_sha256_CTX c;
	size_t n;
	FILE *f;

	hex[0] = '\0';
	if (strcmp(path, "-") == 0)
		return 0;
	f = fopen(path, "rb");
	if (f == NULL)
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	ldns_sha256_init(&c);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		ldns_sha256_update(&c, buf, n);
	if (ferror(f)) {
		int e = errno ? errno : EIO;
		fclose(f);
		return dv_err_set(err, -e, "%s: read failed: %s", path, strerror(e));
	}
	fclose(f);
	ldns_sha256_final(d, &c);
	for (int i = 0; i < LDNS_SHA256_DIGEST_LENGTH; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

bool dv_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *da, *db, ra[PATH_MAX], rb[PATH_MAX], *ba, *bb;
	bool same = false;

	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	/* Not both there yet: the same directory and the same last component. */
	da = strdup(a);
	db = strdup(b);
	ba = strdup(a);
	bb = strdup(b);
	if (da != NULL && db != NULL && ba != NULL && bb != NULL &&
	    realpath(dirname(da), ra) != NULL && realpath(dirname(db), rb) != NULL)
		same = strcmp(ra, rb) == 0 && strcmp(basename(ba), basename(bb)) == 0;
	free(da);
	free(db);
	free(ba);
	free(bb);
	return same;
}
