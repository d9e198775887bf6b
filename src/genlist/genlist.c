/* genlist: read a domain list, dedupe/shuffle it, write "PREFIXdomain TYPE" query lists. */
#include "config.h"

#include "genlist/genlist.h"

#include <ctype.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GL_NAME_TEXT_MAX (255 * 4 + 1) /* longest name text that can still fit (\DDD) */

static const char *display_name(const char *name)
{
	return strcmp(name, "-") == 0 ? "(stdin)" : name;
}

void dv_domains_free(dv_domains_t *d)
{
	if (d == NULL)
		return;
	free(d->arena);
	free(d->off);
	free(d->line);
	free(d->source);
	memset(d, 0, sizeof(*d));
}

/* Name text to wire with ldns. Returns 0, or -EINVAL with a reason in why. */
static int name_to_wire(const char *text, ldns_rdf **out, const char **why)
{
	ldns_status st = ldns_str2rdf_dname(out, text);

	if (st == LDNS_STATUS_OK)
		return 0;
	*out = NULL;
	switch (st) {
	case LDNS_STATUS_LABEL_OVERFLOW:
		*why = "label longer than 63 octets";
		break;
	case LDNS_STATUS_DOMAINNAME_OVERFLOW:
		*why = "name longer than 255 octets";
		break;
	case LDNS_STATUS_EMPTY_LABEL:
		*why = "empty label";
		break;
	case LDNS_STATUS_SYNTAX_BAD_ESCAPE:
		*why = "bad escape";
		break;
	case LDNS_STATUS_MEM_ERR:
		*why = "out of memory";
		return -ENOMEM;
	default:
		*why = ldns_get_errorstr_by_id(st);
		break;
	}
	return -EINVAL;
}

static int push(dv_domains_t *d, const char *p, size_t len, size_t line)
{
	if (d->count == d->cap) {
		size_t cap = d->cap < 1024 ? 1024 : d->cap * 2;
		uint32_t *o = realloc(d->off, cap * sizeof(*o));
		if (o == NULL)
			return -ENOMEM;
		d->off = o;
		uint32_t *l = realloc(d->line, cap * sizeof(*l));
		if (l == NULL)
			return -ENOMEM;
		d->line = l;
		d->cap = cap;
	}
	if (d->arena_cap - d->arena_len < len + 1) {
		size_t cap = d->arena_cap < 65536 ? 65536 : d->arena_cap * 2;
		while (cap - d->arena_len < len + 1)
			cap *= 2;
		char *a = realloc(d->arena, cap);
		if (a == NULL)
			return -ENOMEM;
		d->arena = a;
		d->arena_cap = cap;
	}
	if (d->arena_len + len + 1 > UINT32_MAX || line > UINT32_MAX)
		return -EFBIG;
	memcpy(d->arena + d->arena_len, p, len);
	d->arena[d->arena_len + len] = '\0';
	d->off[d->count] = (uint32_t)d->arena_len;
	d->line[d->count] = (uint32_t)line;
	d->count++;
	d->arena_len += len + 1;
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* One input line. 0 = fine (added or nothing), negative = stop with err. */
static int domain_line(dv_domains_t *d, const char *p, size_t len, size_t line, dv_err_t *err)
{
	const char *name = display_name(d->source);
	size_t i = 0, start, nlen;
	char text[GL_NAME_TEXT_MAX + 1];
	ldns_rdf *rdf;
	const char *why = NULL;
	int rc;

	while (i < len && is_space(p[i]))
		i++;
	if (i == len || p[i] == '#' || p[i] == ';')
		return 0;
	start = i;
	while (i < len && !is_space(p[i]))
		i++;
	nlen = i - start;
	while (i < len && is_space(p[i]))
		i++;
	if (i < len && p[i] != '#' && p[i] != ';') {
		size_t e = i;
		while (e < len && !is_space(p[e]))
			e++;
		return dv_err_set(
		    err, -EINVAL,
		    "%s:%zu: stray extra field (expected one domain per line): '%.*s'", name, line,
		    (int)DV_MIN(e - i, (size_t)32), p + i);
	}
	if (memchr(p + start, '\0', nlen) != NULL)
		return dv_err_set(err, -EINVAL, "%s:%zu: NUL byte in line", name, line);
	if (nlen > GL_NAME_TEXT_MAX)
		return dv_err_set(err, -EINVAL, "%s:%zu: name longer than 255 octets: '%.32s...'",
		                  name, line, p + start);
	memcpy(text, p + start, nlen);
	text[nlen] = '\0';
	rc = name_to_wire(text, &rdf, &why);
	if (rc != 0)
		return dv_err_set(err, rc, "%s:%zu: %s in domain '%.64s%s'", name, line, why, text,
		                  nlen > 64 ? "..." : "");
	ldns_rdf_deep_free(rdf);
	rc = push(d, p + start, nlen, line);
	if (rc != 0)
		return dv_err_set(err, rc, "%s:%zu: %s", name, line, strerror(-rc));
	return 0;
}

static int load_finish(dv_domains_t *d, dv_err_t *err)
{
	if (d->count == 0)
		return dv_err_set(err, -EINVAL, "%s: no domains", display_name(d->source));
	return 0;
}

static int load_begin(dv_domains_t *d, const char *name, dv_err_t *err)
{
	memset(d, 0, sizeof(*d));
	d->source = strdup(name);
	if (d->source == NULL)
		return dv_err_set(err, -ENOMEM, "%s: out of memory", name);
	return 0;
}

int dv_domains_load_buffer(dv_domains_t *d, const char *buf, size_t len, const char *name,
                           dv_err_t *err)
{
	size_t pos = 0, line = 0;
	int rc = load_begin(d, name, err);

	while (rc == 0 && pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
		rc = domain_line(d, buf + pos, llen, ++line, err);
		pos += llen + 1;
	}
	if (rc == 0)
		rc = load_finish(d, err);
	if (rc != 0)
		dv_domains_free(d);
	return rc;
}

int dv_domains_load_stream(dv_domains_t *d, FILE *in, const char *name, dv_err_t *err)
{
	char *buf = NULL;
	size_t cap = 0, line = 0;
	ssize_t n;
	int rc = load_begin(d, name, err);

	errno = 0;
	while (rc == 0 && (n = getline(&buf, &cap, in)) >= 0) {
		size_t llen = (size_t)n;
		if (llen > 0 && buf[llen - 1] == '\n')
			llen--;
		rc = domain_line(d, buf, llen, ++line, err);
		errno = 0;
	}
	if (rc == 0 && ferror(in)) {
		int e = errno != 0 ? errno : EIO;
		rc = dv_err_set(err, -e, "%s: %s", display_name(name), strerror(e));
	}
	if (rc == 0)
		rc = load_finish(d, err);
	free(buf);
	if (rc != 0)
		dv_domains_free(d);
	return rc;
}

/* FNV-1a over lowercased wire bytes. */
static uint64_t key_hash(const uint8_t *k, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= k[i];
		h *= 1099511628211ULL;
	}
	return h;
}

long dv_domains_dedupe(dv_domains_t *d)
{
	/* Keys: the canonical (lowercased) wire form of each name, in one buffer. */
	uint8_t *keys = NULL;
	uint32_t *koff = NULL, *table = NULL;
	size_t klen = 0, tsize = 2, kept = 0;
	long rc;

	if (d->count == 0)
		return 0;
	while (tsize < d->count * 2)
		tsize *= 2;
	/* a wire name is at most its text length + 2: arena_len + count covers all */
	keys = malloc(d->arena_len + d->count);
	koff = malloc((d->count + 1) * sizeof(*koff));
	table = malloc(tsize * sizeof(*table)); /* index + 1; 0 = empty */
	if (keys == NULL || koff == NULL || table == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memset(table, 0, tsize * sizeof(*table));
	for (size_t i = 0; i < d->count; i++) {
		ldns_rdf *rdf = NULL;
		const char *why;
		size_t wlen, slot;

		if (name_to_wire(dv_domains_get(d, i), &rdf, &why) != 0) {
			rc = -ENOMEM; /* every name was checked at load; only memory can fail */
			goto out;
		}
		wlen = ldns_rdf_size(rdf);
		memcpy(keys + klen, ldns_rdf_data(rdf), wlen);
		ldns_rdf_deep_free(rdf);
		for (size_t j = 0; j < wlen; j++)
			keys[klen + j] = (uint8_t)tolower(keys[klen + j]);
		slot = key_hash(keys + klen, wlen) & (tsize - 1);
		for (;;) {
			uint32_t t = table[slot];
			if (t == 0) {
				/* new name: keep it at position kept */
				koff[kept] = (uint32_t)klen;
				koff[kept + 1] = (uint32_t)(klen + wlen);
				table[slot] = (uint32_t)kept + 1;
				d->off[kept] = d->off[i];
				d->line[kept] = d->line[i];
				klen += wlen;
				kept++;
				break;
			}
			size_t olen = koff[t] - koff[t - 1];
			if (olen == wlen && memcmp(keys + koff[t - 1], keys + klen, wlen) == 0)
				break; /* seen: drop */
			slot = (slot + 1) & (tsize - 1);
		}
	}
	rc = (long)(d->count - kept);
	d->count = kept;
out:
	free(keys);
	free(koff);
	free(table);
	return rc;
}

uint64_t dv_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void dv_domains_shuffle(dv_domains_t *d, uint64_t seed)
{
	uint64_t st = seed;

	for (size_t i = d->count; i > 1; i--) {
		/* j uniform in [0, i) by multiply-shift (bias < i / 2^64) */
		size_t j = (size_t)(((unsigned __int128)dv_splitmix64(&st) * i) >> 64);
		uint32_t t = d->off[i - 1];
		d->off[i - 1] = d->off[j];
		d->off[j] = t;
		t = d->line[i - 1];
		d->line[i - 1] = d->line[j];
		d->line[j] = t;
	}
}

static int check_type(const char *type)
{
	size_t len = strlen(type);

	if (len > 4 && strncasecmp(type, "TYPE", 4) == 0) {
		unsigned long v = 0;
		for (size_t i = 4; i < len; i++) {
			if (!isdigit((unsigned char)type[i]) || i > 9)
				return -EINVAL;
			v = v * 10 + (unsigned long)(type[i] - '0');
		}
		return v <= 65535 ? 0 : -EINVAL;
	}
	if (strncasecmp(type, "TYPE", 4) == 0)
		return -EINVAL;
	return ldns_get_rr_type_by_name(type) != 0 ? 0 : -EINVAL;
}

int dv_genlist_spec_set(dv_genlist_spec_t *spec, const char *type, const char *prefix,
                        const char *path, dv_err_t *err)
{
	size_t plen = strlen(prefix);

	memset(spec, 0, sizeof(*spec));
	if (strlen(type) >= sizeof(spec->type) || type[0] == '\0' || check_type(type) != 0)
		return dv_err_set(err, -EINVAL, "unknown query type '%s'", type);
	if (plen + 2 > sizeof(spec->prefix))
		return dv_err_set(err, -EINVAL, "prefix too long: '%s'", prefix);
	if (path[0] == '\0' || strlen(path) >= sizeof(spec->path))
		return dv_err_set(err, -EINVAL, "bad output path '%s'", path);
	for (size_t i = 0; i < plen; i++)
		if (is_space(prefix[i]) || prefix[i] == '#' || prefix[i] == ';')
			return dv_err_set(err, -EINVAL, "bad prefix '%s'", prefix);
	if (plen > 0) {
		char text[sizeof(spec->prefix) + 1];
		ldns_rdf *rdf;
		const char *why;

		snprintf(text, sizeof(text), "%s%s", prefix, prefix[plen - 1] == '.' ? "" : ".");
		if (strcmp(text, ".") == 0 || name_to_wire(text, &rdf, &why) != 0)
			return dv_err_set(err, -EINVAL, "bad prefix '%s'", prefix);
		ldns_rdf_deep_free(rdf);
		memcpy(spec->prefix, text, strlen(text) + 1);
	}
	memcpy(spec->type, type, strlen(type) + 1);
	memcpy(spec->path, path, strlen(path) + 1);
	return 0;
}

int dv_genlist_spec_parse(dv_genlist_spec_t *spec, const char *arg, dv_err_t *err)
{
	const char *eq = strchr(arg, '=');
	char head[128];
	char *colon;
	size_t hlen;

	if (eq == NULL)
		return dv_err_set(err, -EINVAL, "--type wants TYPE[:PREFIX]=FILE, got '%s'", arg);
	hlen = (size_t)(eq - arg);
	if (hlen == 0 || hlen >= sizeof(head))
		return dv_err_set(err, -EINVAL, "--type wants TYPE[:PREFIX]=FILE, got '%s'", arg);
	memcpy(head, arg, hlen);
	head[hlen] = '\0';
	colon = strchr(head, ':');
	if (colon != NULL)
		*colon++ = '\0';
	return dv_genlist_spec_set(spec, head, colon != NULL ? colon : "", eq + 1, err);
}

/* The output name of domain i: prefix + domain ("." alone becomes just the prefix). */
static const char *out_name(const dv_domains_t *d, size_t i, const dv_genlist_spec_t *spec)
{
	const char *n = dv_domains_get(d, i);
	return spec->prefix[0] != '\0' && strcmp(n, ".") == 0 ? "" : n;
}

int dv_genlist_check(const dv_domains_t *d, const dv_genlist_spec_t *spec, dv_err_t *err)
{
	char text[sizeof(spec->prefix) + GL_NAME_TEXT_MAX + 1];

	if (spec->prefix[0] == '\0')
		return 0; /* every domain was checked at load */
	for (size_t i = 0; i < d->count; i++) {
		ldns_rdf *rdf;
		const char *why;
		int rc;

		snprintf(text, sizeof(text), "%s%s", spec->prefix, out_name(d, i, spec));
		rc = name_to_wire(text, &rdf, &why);
		if (rc != 0)
			return dv_err_set(err, rc, "%s:%u: %s with prefix '%s': '%.64s%s'",
			                  display_name(d->source), (unsigned)d->line[i], why,
			                  spec->prefix, dv_domains_get(d, i),
			                  strlen(dv_domains_get(d, i)) > 64 ? "..." : "");
		ldns_rdf_deep_free(rdf);
	}
	return 0;
}

int dv_genlist_write(FILE *out, const dv_domains_t *d, const dv_genlist_spec_t *spec)
{
	for (size_t i = 0; i < d->count; i++) {
		if (fprintf(out, "%s%s %s\n", spec->prefix, out_name(d, i, spec), spec->type) < 0)
			return errno != 0 ? -errno : -EIO;
	}
	if (fflush(out) != 0)
		return errno != 0 ? -errno : -EIO;
	return 0;
}
