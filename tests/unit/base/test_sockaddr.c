/* test_sockaddr: address text for IPv4, IPv6 (with brackets, with a scope) and other families. */
#include "config.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/sockaddr.h"

static void test_ipv4(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(5300)};
	char buf[DV_SOCKADDR_TEXT_MAX];

	(void)state;
	inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
	dv_sockaddr_text((struct sockaddr *)&a, buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.1:5300");
	dv_sockaddr_host((struct sockaddr *)&a, buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.1");
	assert_int_equal(dv_sockaddr_port((struct sockaddr *)&a), 5300);
	dv_sockaddr_text_port((struct sockaddr *)&a, 53, buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.1:53");
	dv_sockaddr_text((struct sockaddr *)&a, buf, 8); /* cut, still a string */
	assert_string_equal(buf, "192.0.2");
}

static void test_ipv6(void **state)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(853)};
	char buf[DV_SOCKADDR_TEXT_MAX];

	(void)state;
	inet_pton(AF_INET6, "2001:db8::1", &a.sin6_addr);
	dv_sockaddr_text((struct sockaddr *)&a, buf, sizeof(buf));
	assert_string_equal(buf, "[2001:db8::1]:853");
	dv_sockaddr_host((struct sockaddr *)&a, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::1");
	assert_int_equal(dv_sockaddr_port((struct sockaddr *)&a), 853);
	/* A link-local address keeps its scope (as a -s fe80::1%lo target was written). */
	inet_pton(AF_INET6, "fe80::1", &a.sin6_addr);
	a.sin6_scope_id = if_nametoindex("lo");
	if (a.sin6_scope_id != 0) {
		dv_sockaddr_text((struct sockaddr *)&a, buf, sizeof(buf));
		assert_string_equal(buf, "[fe80::1%lo]:853");
	}
}

static void test_other_family(void **state)
{
	struct sockaddr_storage a;
	char buf[DV_SOCKADDR_TEXT_MAX];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.ss_family = AF_UNIX;
	dv_sockaddr_text((struct sockaddr *)&a, buf, sizeof(buf));
	assert_string_equal(buf, "(address family 1)");
	dv_sockaddr_host((struct sockaddr *)&a, buf, sizeof(buf));
	assert_string_equal(buf, "?");
	assert_int_equal(dv_sockaddr_port((struct sockaddr *)&a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ipv4),
	    cmocka_unit_test(test_ipv6),
	    cmocka_unit_test(test_other_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
