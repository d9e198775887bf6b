/* target: the server address of a command line (-s, -p, -f) resolved to a socket address. */
#ifndef DV_TARGET_H
#define DV_TARGET_H

#include <stdint.h>
#include <sys/socket.h>

#include "base/util.h"

/*
 * Parse "ADDR", "ADDR:PORT", "[V6]:PORT", "V6" or a host name into sa (default_port
 * when none); family AF_INET, AF_INET6 or AF_UNSPEC (any) restricts name lookups (-f).
 * Returns 0, or -EINVAL with err naming what is wrong (syntax, port, lookup).
 */
int dv_resolve_target(const char *spec, uint16_t default_port, int family,
                      struct sockaddr_storage *sa, socklen_t *len, dv_err_t *err);

#endif
