/* target: resolve a server address given on the command line (getaddrinfo, numeric ports). */
#include "config.h"

#include "cmd/target.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * A bare IPv6 address with a port glued on ("::1:5300") reads as another
 * address or as none: refuse it, naming the bracket form. An address whose
 * last group is decimal and whose rest is an address is refused too (is
 * "::1:5450" the address ::1:5450 or ::1 port 5450?).
 */
static int check_bare_v6(const char *spec, dv_err_t *err)
{
	const char *last = strrchr(spec, ':');
	char prefix[INET6_ADDRSTRLEN + 8];
	struct in6_addr a6;
	bool whole_ok = inet_pton(AF_INET6, spec, &a6) == 1;
	uint64_t port;
	size_t n = (size_t)(last - spec);

	if (dv_parse_u64(last + 1, 1, 65535, &port) != 0 || n >= sizeof(prefix))
		return 0;
	memcpy(prefix, spec, n);
	prefix[n] = '\0';
	if (inet_pton(AF_INET6, prefix, &a6) != 1)
		return 0;
	if (!whole_ok)
		return dv_err_set(err, -EINVAL,
		                  "'%s' is not an IPv6 address; for port %llu write [%s]:%llu",
		                  spec, (unsigned long long)port, prefix, (unsigned long long)port);
	return dv_err_set(err, -EINVAL,
	                  "'%s' is ambiguous: write [%s]:%llu for port %llu of %s, or [%s] for "
	                  "the address",
	                  spec, prefix, (unsigned long long)port, (unsigned long long)port, prefix,
	                  spec);
}

/* Why a name did not resolve in the family asked for (-f), when it does in the other. */
static int family_mismatch(const char *host, int family, dv_err_t *err)
{
	struct addrinfo hints, *res = NULL;
	bool numeric;

	if (family == AF_UNSPEC)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	if (getaddrinfo(host, "53", &hints, &res) != 0 || res == NULL)
		return 0;
	freeaddrinfo(res);
	hints.ai_flags = AI_NUMERICHOST;
	numeric = getaddrinfo(host, "53", &hints, &res) == 0;
	if (numeric)
		freeaddrinfo(res);
	if (numeric)
		return dv_err_set(err, -EINVAL, "'%s' is an %s address, but -f %s asks for %s",
		                  host, family == AF_INET6 ? "IPv4" : "IPv6",
		                  family == AF_INET6 ? "inet6" : "inet",
		                  family == AF_INET6 ? "IPv6" : "IPv4");
	return dv_err_set(
	    err, -EINVAL, "'%s' has no %s address (%s record), only %s: use -f %s or -f any", host,
	    family == AF_INET6 ? "IPv6" : "IPv4", family == AF_INET6 ? "AAAA" : "A",
	    family == AF_INET6 ? "IPv4" : "IPv6", family == AF_INET6 ? "inet" : "inet6");
}

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
			if (colon != NULL && (rc = check_bare_v6(spec, err)) != 0)
				return rc;
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
	if ((rc != 0 || res == NULL) && family_mismatch(host, family, err) != 0)
		return -EINVAL;
	if (rc != 0 || res == NULL)
		return dv_err_set(err, -EINVAL, "'%s': cannot resolve: %s", host,
		                  rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}
