/* event: how a connection reports to the engine, for conn.c and every kind alike; the
 * operations a kind without timers shares. */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>

int dv_tp_emit(dv_tp_conn_t *c, const dv_tp_event_t *ev)
{
	int rc = c->fn(c->ctx, ev);
	if (rc < 0 && c->cb_rc == 0)
		c->cb_rc = rc;
	return rc;
}

int dv_tp_proto_error(dv_tp_conn_t *c, const char *what)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_PROTO_ERROR, .what = what};
	int rc;

	if (c->dead)
		return -EPROTO;
	c->dead = true;
	rc = dv_tp_emit(c, &ev);
	return rc < 0 ? rc : -EPROTO;
}

int dv_tp_emit_closed(dv_tp_conn_t *c)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_CLOSED};

	if (c->closed || c->dead)
		return 0;
	c->closed = true;
	return dv_tp_emit(c, &ev);
}

int dv_tp_emit_handshake(dv_tp_conn_t *c, bool resumed)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_HANDSHAKE, .resumed = resumed};

	if (c->hs_reported)
		return 0;
	c->hs_reported = true;
	if (resumed)
		c->s->own_resumed++;
	else
		c->s->own_full++;
	return dv_tp_emit(c, &ev);
}

int dv_tp_no_shared_init(dv_tp_shared_t *s, dv_err_t *err)
{
	(void)s;
	(void)err;
	return 0;
}

int dv_tp_no_attach(dv_tp_conn_t *c)
{
	(void)c;
	return 0;
}

void dv_tp_no_detach(dv_tp_conn_t *c)
{
	(void)c;
}

int dv_tp_no_pump(dv_tp_conn_t *c)
{
	(void)c;
	return 0;
}

size_t dv_tp_no_limit(const dv_tp_conn_t *c)
{
	(void)c;
	return SIZE_MAX;
}

const char *dv_tp_no_why(const dv_tp_conn_t *c)
{
	(void)c;
	return NULL;
}

int dv_tp_no_cancel(dv_tp_conn_t *c, uint64_t id)
{
	(void)c;
	(void)id;
	return 0;
}

size_t dv_tp_no_in_flight(const dv_tp_conn_t *c)
{
	(void)c;
	return 0;
}

void dv_tp_no_close(dv_tp_conn_t *c)
{
	(void)c;
}

uint64_t dv_tp_no_deadline(const dv_tp_conn_t *c)
{
	(void)c;
	return UINT64_MAX;
}

int dv_tp_no_expiry(dv_tp_conn_t *c, uint64_t now_ns)
{
	(void)c;
	(void)now_ns;
	return 0;
}
