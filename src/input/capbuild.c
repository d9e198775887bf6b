/* capbuild: check captured queries, pack them into one arena, number clients densely. */
#include "config.h"

#include "input/capbuild.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wire.h"

void dv_capbuild_init(dv_capbuild_t *b, const char *name, const dv_input_options_t *o,
                      dv_input_stats_t *st, bool has_ts, bool has_client)
{
	memset(b, 0, sizeof(*b));
	b->source = name;
	b->name = strcmp(name, "-") == 0 ? "(stdin)" : name;
	b->opts = o;
	b->st = st;
	b->has_ts = has_ts;
	b->has_client = has_client;
}

void dv_capbuild_free(dv_capbuild_t *b)
{
	free(b->arena);
	free(b->off);
	free(b->qlen);
	free(b->ts);
	free(b->client);
	free(b->keys);
	free(b->slots);
	memset(b, 0, sizeof(*b));
}

int dv_capbuild_bad(dv_capbuild_t *b, uint64_t pos, dv_err_t *err, const char *fmt, ...)
{
	dv_input_stats_t *st = b->st;
	char what[sizeof(st->bad[0].what)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	st->malformed++;
	if (st->bad_kept < DV_INPUT_BAD_KEPT) {
		st->bad[st->bad_kept].pos = pos;
		memcpy(st->bad[st->bad_kept].what, what, sizeof(what));
		st->bad_kept++;
	}
	if (b->opts->strict)
		return dv_err_set(err, -EINVAL, "%s: %s %llu: %s", b->name, st->pos_unit,
		                  (unsigned long long)pos, what);
	return 0;
}

const char *dv_capbuild_check(const uint8_t *msg, size_t len, size_t *qlen)
{
	if (len < DV_DNS_HEADER_LEN + 5)
		return "message shorter than a header and a question";
	if (len > DV_QUERYLIST_WIRE_MAX)
		return "query longer than 512 octets";
	if (DV_WIRE_QR(msg))
		return "a response (QR = 1), not a query";
	if (DV_WIRE_QDCOUNT(msg) != 1)
		return "QDCOUNT is not 1";
	*qlen = dv_wire_question_len(msg, len);
	if (*qlen < 5)
		return "question name malformed or truncated";
	return NULL;
}

static int grow(dv_capbuild_t *b, size_t len)
{
	if (b->arena_cap - b->arena_len < len) {
		size_t cap = b->arena_cap < 65536 ? 65536 : b->arena_cap + b->arena_cap / 2;
		uint8_t *a;
		while (cap - b->arena_len < len)
			cap *= 2;
		a = realloc(b->arena, cap);
		if (a == NULL)
			return -ENOMEM;
		b->arena = a;
		b->arena_cap = cap;
	}
	if (b->cap < b->count + 2) {
		size_t cap = b->cap < 16384 ? 16384 : b->cap + b->cap / 2;
		void *p;
		if ((p = realloc(b->off, cap * sizeof(*b->off))) == NULL)
			return -ENOMEM;
		b->off = p;
		if ((p = realloc(b->qlen, cap * sizeof(*b->qlen))) == NULL)
			return -ENOMEM;
		b->qlen = p;
		if (b->has_ts) {
			if ((p = realloc(b->ts, cap * sizeof(*b->ts))) == NULL)
				return -ENOMEM;
			b->ts = p;
		}
		if (b->has_client) {
			if ((p = realloc(b->client, cap * sizeof(*b->client))) == NULL)
				return -ENOMEM;
			b->client = p;
		}
		b->cap = cap;
	}
	return 0;
}

static uint64_t key_hash(const dv_client_key_t *k)
{
	uint64_t a, c;
	memcpy(&a, k->addr, 8);
	memcpy(&c, k->addr + 8, 8);
	uint64_t h = (a ^ (c * 0x9E3779B97F4A7C15ULL)) + ((uint64_t)k->port << 8 | k->family);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static bool key_eq(const dv_client_key_t *a, const dv_client_key_t *b)
{
	return a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static int rehash(dv_capbuild_t *b)
{
	size_t n = b->nslots ? b->nslots * 2 : 1024, i;
	uint32_t *s = calloc(n, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	for (i = 0; i < b->nkeys; i++) {
		size_t j = key_hash(&b->keys[i]) & (n - 1);
		while (s[j] != 0)
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(b->slots);
	b->slots = s;
	b->nslots = n;
	return 0;
}

/* Dense index of key (new keys get the next one); negative on ENOMEM. */
static int64_t client_index(dv_capbuild_t *b, const dv_client_key_t *key)
{
	dv_client_key_t k = *key;
	size_t j;

	if (b->opts->client_addr_only)
		k.port = 0;
	if ((b->nkeys + 1) * 2 > b->nslots && rehash(b) != 0)
		return -ENOMEM;
	j = key_hash(&k) & (b->nslots - 1);
	while (b->slots[j] != 0) {
		if (key_eq(&b->keys[b->slots[j] - 1], &k))
			return b->slots[j] - 1;
		j = (j + 1) & (b->nslots - 1);
	}
	if (b->nkeys == b->keys_cap) {
		size_t cap = b->keys_cap ? b->keys_cap * 2 : 256;
		dv_client_key_t *nk = realloc(b->keys, cap * sizeof(*nk));
		if (nk == NULL)
			return -ENOMEM;
		b->keys = nk;
		b->keys_cap = cap;
	}
	b->keys[b->nkeys] = k;
	b->slots[j] = (uint32_t)(b->nkeys + 1);
	return (int64_t)b->nkeys++;
}

int dv_capbuild_add(dv_capbuild_t *b, const uint8_t *msg, size_t len, uint64_t ts,
                    const dv_client_key_t *key, uint64_t pos, dv_err_t *err)
{
	const char *why;
	size_t qlen = 0;
	int rc;

	why = dv_capbuild_check(msg, len, &qlen);
	if (why != NULL)
		return dv_capbuild_bad(b, pos, err, "%s", why);
	if (b->arena_len + len > UINT32_MAX)
		return dv_err_set(err, -EFBIG, "%s: more than 4 GiB of queries", b->name);
	if ((rc = grow(b, len)) != 0)
		return dv_err_set(err, rc, "%s: out of memory", b->name);
	if (b->has_client) {
		int64_t ci = client_index(b, key);
		if (ci < 0)
			return dv_err_set(err, -ENOMEM, "%s: out of memory", b->name);
		b->client[b->count] = (uint32_t)ci;
	}
	if (b->has_ts) {
		if (b->count > 0 && ts < b->last_ts)
			b->st->ts_backwards++;
		b->ts[b->count] = ts;
		b->last_ts = ts;
	}
	memcpy(b->arena + b->arena_len, msg, len);
	b->arena[b->arena_len] = 0; /* ID 0: the engine writes its own */
	b->arena[b->arena_len + 1] = 0;
	b->off[b->count] = (uint32_t)b->arena_len;
	b->qlen[b->count] = (uint16_t)qlen;
	b->arena_len += len;
	b->count++;
	b->st->queries++;
	return 1;
}

int dv_capbuild_finish(dv_capbuild_t *b, dv_querylist_t *ql, dv_err_t *err)
{
	size_t i;
	void *p;

	if (b->count == 0) {
		if (b->st->malformed > 0)
			return dv_err_set(
			    err, -EINVAL,
			    "%s: no queries (%llu malformed records skipped; first at %s "
			    "%llu: %s)",
			    b->name, (unsigned long long)b->st->malformed, b->st->pos_unit,
			    (unsigned long long)b->st->bad[0].pos, b->st->bad[0].what);
		return dv_err_set(err, -EINVAL, "%s: no queries", b->name);
	}
	b->off[b->count] = (uint32_t)b->arena_len;
	if (b->has_ts) {
		uint64_t min = UINT64_MAX;
		for (i = 0; i < b->count; i++)
			min = b->ts[i] < min ? b->ts[i] : min;
		for (i = 0; i < b->count; i++)
			b->ts[i] -= min;
	}
	if ((p = realloc(b->arena, b->arena_len)) != NULL)
		b->arena = p;
	ql->source = strdup(b->source);
	if (ql->source == NULL)
		return dv_err_set(err, -ENOMEM, "%s: out of memory", b->name);
	ql->arena = b->arena;
	ql->arena_len = b->arena_len;
	ql->off = b->off;
	ql->count = b->count;
	ql->lines = b->st->records;
	ql->skipped = 0; /* lines skipped by --skip-bad: a text list's; st->malformed says */
	ql->opt_len = 0;
	ql->qlen = b->qlen;
	ql->ts_ns = b->ts;
	ql->client = b->client;
	ql->clients = b->has_client ? b->nkeys : 0;
	b->arena = NULL;
	b->off = NULL;
	b->qlen = NULL;
	b->ts = NULL;
	b->client = NULL;
	return 0;
}
