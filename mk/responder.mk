# src/responder: the bundled loopback DNS responder, dnsvolley-responder.
libdnsvolley_la_SOURCES += src/responder/answer.c src/responder/answer.h \
	src/responder/responder.c src/responder/responder.h \
	src/responder/stream.c src/responder/stream.h \
	src/responder/https.c src/responder/https.h \
	src/responder/quic.c src/responder/quic.h
bin_PROGRAMS += dnsvolley-responder
dnsvolley_responder_SOURCES = src/responder/responder_main.c
dnsvolley_responder_LDADD = $(DV_LIBS)
dist_man_MANS += doc/dnsvolley-responder.1

if HAVE_CMOCKA
RESPONDER_UNIT = tests/unit/responder/test_answer
check_PROGRAMS += $(RESPONDER_UNIT)
TESTS += $(RESPONDER_UNIT)
endif
