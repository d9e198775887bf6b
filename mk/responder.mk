# responder: the bundled loopback DNS responder (dnsvolley-responder), its tests and man page.
libdnsvolley_la_SOURCES += src/answer.c src/answer.h src/responder.c src/responder.h

bin_PROGRAMS += dnsvolley-responder
dnsvolley_responder_SOURCES = src/responder_main.c
dnsvolley_responder_LDADD = $(DV_LIBS)

dist_man_MANS += doc/dnsvolley-responder.1

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_answer
tests_unit_test_answer_SOURCES = tests/unit/test_answer.c
tests_unit_test_answer_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_answer_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_answer
endif

TESTS += tests/integration/responder.sh
EXTRA_DIST += tests/integration/responder.sh bench/responder-ceiling.sh
# The responder runs threads (-T 3 in the integration test): checked under TSan too.
TSAN_TESTS += tests/integration/responder.sh
