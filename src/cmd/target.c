/* target: resolve a server address given on the command line (getaddrinfo, numeric ports). */
#include "config.h"

#include "cmd/target.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

int dv_resolve_target(const char *spec, uint16_t default_port, int family,
                      struct sockaddr_storage *sa, socklen_t *len, dv_err_t *err)
{
	char host[256];
	const char *port_str = NULL;
	char portbuf[8];
	struct addrinfo hints, *res = NULL;
	const char *colon;
	int rc;

	if (spec == NULL || *spec == '\0')
		return dv_err_set(err, -EINVAL, "empty server address");
	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');
		if (end == NULL || (size_t)(end - spec - 1) >= sizeof(host))
			return dv_err_set(err, -EINVAL, "'%s': unterminated [IPv6] address", spec);
		memcpy(host, spec + 1, (size_t)(end - spec - 1));
		host[end - spec - 1] = '\0';
		if (end[1] == ':')
			port_str = end + 2;
		else if (end[1] != '\0')
			return dv_err_set(err, -EINVAL, "'%s': junk after ']'", spec);
	} else {
		colon = strchr(spec, ':');
		if (colon != NULL && strchr(colon + 1, ':') == NULL) { /* host:port */
			if ((size_t)(colon - spec) >= sizeof(host))
				return dv_err_set(err, -EINVAL, "'%s': name too long", spec);
			memcpy(host, spec, (size_t)(colon - spec));
			host[colon - spec] = '\0';
			port_str = colon + 1;
		} else { /* a name, IPv4, or bare IPv6 */
			if (strlen(spec) >= sizeof(host))
				return dv_err_set(err, -EINVAL, "'%s': name too long", spec);
			strcpy(host, spec);
		}
	}
	if (port_str != NULL) {
		uint64_t p;
		if (dv_parse_u64(port_str, 1, 65535, &p) != 0)
			return dv_err_set(err, -EINVAL, "'%s': port must be 1-65535", spec);
		snprintf(portbuf, sizeof(portbuf), "%u", (unsigned)p);
	} else {
		snprintf(portbuf, sizeof(portbuf), "%u", (unsigned)default_port);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICSERV;
	rc = getaddrinfo(host, portbuf, &hints, &res);
	if (rc != 0 || res == NULL)
		return dv_err_set(err, -EINVAL, "'%s': cannot resolve: %s", host,
		                  rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}
