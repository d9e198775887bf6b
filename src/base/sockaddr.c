/* sockaddr: address text for messages and reports (never on a hot path). */
#include "config.h"

#include "base/sockaddr.h"

#include <netinet/in.h>
#include <stdio.h>

static socklen_t family_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	}
	return 0;
}

void dv_sockaddr_host(const struct sockaddr *sa, char *buf, size_t cap)
{
	socklen_t len = family_len(sa);

	if (cap == 0)
		return;
	if (len == 0 || getnameinfo(sa, len, buf, (socklen_t)cap, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(buf, cap, "?");
}

unsigned dv_sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return 0;
}

void dv_sockaddr_text_port(const struct sockaddr *sa, unsigned port, char *buf, size_t cap)
{
	char host[NI_MAXHOST];

	if (family_len(sa) == 0) {
		snprintf(buf, cap, "(address family %d)", sa->sa_family);
		return;
	}
	dv_sockaddr_host(sa, host, sizeof(host));
	snprintf(buf, cap, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}

void dv_sockaddr_text(const struct sockaddr *sa, char *buf, size_t cap)
{
	dv_sockaddr_text_port(sa, dv_sockaddr_port(sa), buf, cap);
}
