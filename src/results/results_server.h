/* results_server: a pass's "server" object in results files (doc/results-schema.md). */
#ifndef DV_RESULTS_SERVER_H
#define DV_RESULTS_SERVER_H

#include <jansson.h>
#include <stddef.h>

#include "engine/servercost.h"

/* The object for s (s->measured), or NULL when out of memory. */
json_t *dv_results_server_to_json(const dv_server_cost_t *s);
/*
 * Read it back into *s (zeroed first; measured set). 0, or -EINVAL with why filled
 * ("server.cpu_user_s: must be a number >= 0"). Keys a later version adds are ignored.
 */
int dv_results_server_from_json(const json_t *o, dv_server_cost_t *s, char *why, size_t why_len);

#endif
