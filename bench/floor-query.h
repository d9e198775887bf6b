/* floor-query: what the kernel-floor clients (bench/floor, bench/tcp-floor) share. */
#ifndef DV_BENCH_FLOOR_QUERY_H
#define DV_BENCH_FLOOR_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static inline uint64_t floor_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * A DNS query for qname, type qtype, class IN, RD set, ID 0, into buf; its length, or -1
 * when a label is empty or longer than 63, or the query does not fit in cap. The floors
 * send it again and again with only the ID changed, and look at nothing in the answers.
 */
static inline int floor_build_query(uint8_t *buf, size_t cap, const char *qname, uint16_t qtype)
{
	static const uint8_t hdr[12] = {0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t n = sizeof(hdr);
	const char *p = qname;

	if (cap < sizeof(hdr))
		return -1;
	memcpy(buf, hdr, n);
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (len == 0 || len > 63 || n + 1 + len + 5 > cap)
			return -1;
		buf[n++] = (uint8_t)len;
		memcpy(buf + n, p, len);
		n += len;
		p += len;
		if (*p == '.')
			p++;
	}
	if (n + 5 > cap)
		return -1;
	buf[n++] = 0;
	buf[n++] = (uint8_t)(qtype >> 8);
	buf[n++] = (uint8_t)qtype;
	buf[n++] = 0;
	buf[n++] = 1; /* IN */
	return (int)n;
}

#endif
