/* kinds: the table of stream transport kinds, by kind and by name, made from transport.h's
 * DV_TP_KINDS list. A new kind is a line there and its own file (doc/transports.md). */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define ROW(k, row) [k] = &row,
static const dv_tp_desc_t *const table[DV_TP_NKINDS] = {DV_TP_KINDS(ROW)};
#undef ROW

const dv_tp_desc_t *dv_tp_desc(dv_tp_kind_t k)
{
	return table[(unsigned)k < DV_TP_NKINDS ? k : DV_TP_TCP];
}

const dv_tp_desc_t *dv_tp_config_desc(const dv_tp_config_t *cfg)
{
	return cfg->desc != NULL ? cfg->desc : dv_tp_desc(cfg->kind);
}

const dv_tp_desc_t *dv_tp_desc_find(const char *name)
{
	for (size_t i = 0; i < DV_TP_NKINDS; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

int dv_tp_kind_parse(const char *s, dv_tp_kind_t *out)
{
	for (size_t i = 0; i < DV_TP_NKINDS; i++) {
		const dv_tp_desc_t *d = table[i];
		if (strcasecmp(s, d->name) == 0 || (d->alias && strcasecmp(s, d->alias) == 0)) {
			*out = d->kind;
			return 0;
		}
	}
	return -EINVAL;
}

const char *dv_tp_kind_name(dv_tp_kind_t k)
{
	return dv_tp_desc(k)->name;
}

const char *dv_tp_kind_list(const char *first, bool tls_only, const char *each)
{
	static char buf[128];
	const char *names[DV_TP_NKINDS + 1];
	size_t n = 0, len = 0;

	if (first != NULL)
		names[n++] = first;
	for (size_t i = 0; i < DV_TP_NKINDS; i++)
		if (!tls_only || table[i]->tls)
			names[n++] = table[i]->name;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(buf); i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int w = snprintf(buf + len, sizeof(buf) - len, "%s%s%s", sep,
		                 i > 0 && each != NULL ? each : "", names[i]);
		len += w > 0 ? (size_t)w : 0;
	}
	return buf;
}
