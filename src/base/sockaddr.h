/* sockaddr: an IPv4 or IPv6 socket address as text, written one way for every message,
 * report and results file. */
#ifndef DV_SOCKADDR_H
#define DV_SOCKADDR_H

#include <netdb.h>
#include <stddef.h>
#include <sys/socket.h>

/* Room for any text below: "[host%scope]:65535". */
#define DV_SOCKADDR_TEXT_MAX (NI_MAXHOST + 16)

/*
 * The numeric host of sa into buf: "192.0.2.1", "2001:db8::1", with the scope of a
 * link-local address ("fe80::1%eth0"), as getnameinfo(NI_NUMERICHOST) writes it; "?"
 * for another family (or a buffer too small).
 */
void dv_sockaddr_host(const struct sockaddr *sa, char *buf, size_t cap);

/* The port of sa in host order; 0 for another family. */
unsigned dv_sockaddr_port(const struct sockaddr *sa);

/*
 * "192.0.2.1:53", "[2001:db8::1]:53" (the host as dv_sockaddr_host writes it); for
 * another family "(address family N)".
 */
void dv_sockaddr_text(const struct sockaddr *sa, char *buf, size_t cap);

/* The same with another port (e.g. the one the kernel chose for a bind to port 0). */
void dv_sockaddr_text_port(const struct sockaddr *sa, unsigned port, char *buf, size_t cap);

#endif
