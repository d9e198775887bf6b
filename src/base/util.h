/* util: small helpers shared by every module: error values, clocks, parsing of numbers. */
#ifndef DV_UTIL_H
#define DV_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Error convention (doc/architecture.md): functions return 0 on success or a
 * negative errno-style code. Where the user needs a sentence, the caller passes a
 * dv_err_t that the callee fills; only main() prints it and decides the exit status.
 */
typedef struct dv_err {
	char msg[512];
} dv_err_t;

/* Fill err (may be NULL) with a printf-style message; returns code unchanged. */
int dv_err_set(dv_err_t *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * DV_NO_COVERAGE: a function a fuzzing build does not instrument for coverage. Only for a
 * flat scan over every input byte whose branches say nothing about the input's structure
 * (doc/fuzzing.md "speed"): instrumented, such a loop was half of a target's time. Not
 * inlined, since instrumentation runs after inlining and would cover it in its caller.
 */
#if defined(__clang__)
#define DV_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define DV_NO_COVERAGE
#endif

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). For intervals only. */
uint64_t dv_now_ns(void);
/* Wall clock in nanoseconds since the epoch (CLOCK_REALTIME). For timestamps only. */
uint64_t dv_wall_ns(void);
/*
 * CLOCK_REALTIME minus CLOCK_MONOTONIC now, to put the kernel's realtime packet stamps on
 * the monotonic clock. Two reads side by side are off by however long the thread was
 * preempted between them (a busy machine: milliseconds, which turned a wire latency into
 * 0): the wall read is bracketed by two monotonic reads and set against their middle,
 * tried again while the bracket is wider than DV_CLOCK_PAIR_NS (the narrowest of
 * DV_CLOCK_PAIR_TRIES kept).
 */
#define DV_CLOCK_PAIR_NS    2000
#define DV_CLOCK_PAIR_TRIES 16
int64_t dv_wall_minus_mono_ns(void);

#define DV_NS_PER_US 1000ULL
#define DV_NS_PER_MS 1000000ULL
#define DV_NS_PER_S  1000000000ULL

/*
 * Strict number parsing for flags: the whole string must be a number in range.
 * Return 0 or -EINVAL / -ERANGE.
 */
int dv_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int dv_parse_double(const char *s, double min, double max, double *out);
/*
 * Seconds with fractions ("0.5", "5", "250ms", "2s") into nanoseconds: -EINVAL when it is
 * not a duration, -ERANGE when it is negative or above DV_DURATION_MAX_S (whatever the unit).
 */
#define DV_DURATION_MAX_S 1e7 /* seconds (~116 days) */
int dv_parse_duration_ns(const char *s, uint64_t *out_ns);

/*
 * Command lines. dv_argv_copy copies argc strings into a NULL-ended vector
 * (free with dv_argv_free; NULL-safe). dv_argv_quote joins them with spaces as
 * a POSIX shell would read them back: a word that is empty or holds a blank or
 * one of '"\$`*?;&|<>() is put in '...' (a ' inside as '\''), others stay
 * bare. Both return NULL when out of memory; the caller frees the result.
 */
char **dv_argv_copy(int argc, char *const *argv);
void dv_argv_free(char **argv);
char *dv_argv_quote(int argc, char *const *argv);

/*
 * SHA-256 of the bytes of PATH as 64 lower-case hex digits into hex (65 bytes
 * with the NUL), by ldns's SHA-256. "-" (stdin) cannot be hashed again: hex
 * becomes "" and 0 is returned. Returns 0 or a negative errno with err filled
 * ("FILE: why").
 */
int dv_sha256_file(const char *path, char hex[65], dv_err_t *err);

/*
 * Do two path names name the same file? Both existing: the same device and inode
 * (links and symlinks included). Otherwise (one about to be created): the same real
 * directory and the same last component. "-" (standard input/output) is never the
 * same as anything.
 */
bool dv_same_file(const char *a, const char *b);

#define DV_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DV_MIN(a, b)     ((a) < (b) ? (a) : (b))
#define DV_MAX(a, b)     ((a) > (b) ? (a) : (b))

#endif
