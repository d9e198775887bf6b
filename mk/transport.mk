# src/transport: stream protocols (TCP framing, TLS, DoH) as byte machines the engine drives.
libdnsvolley_la_SOURCES += src/transport/framing.c src/transport/framing.h \
	src/transport/tls.c src/transport/tls.h src/transport/transport.h \
	src/transport/conn.h src/transport/conn.c src/transport/event.c src/transport/kinds.c \
	src/transport/tcp.c src/transport/dot.c src/transport/doh.c \
	src/transport/doq.c

if HAVE_CMOCKA
TRANSPORT_UNIT = tests/unit/transport/test_framing tests/unit/transport/test_tls \
	tests/unit/transport/test_doh tests/unit/transport/test_kinds \
	tests/unit/transport/test_doq
check_PROGRAMS += $(TRANSPORT_UNIT)
TESTS += $(TRANSPORT_UNIT)
tests_unit_transport_test_tls_SOURCES = tests/unit/transport/test_tls.c \
	tests/unit/transport/selfsigned.h
tests_unit_transport_test_kinds_SOURCES = tests/unit/transport/test_kinds.c \
	tests/unit/transport/echo_kind.c tests/unit/transport/echo_kind.h
tests_unit_transport_test_doh_SOURCES = tests/unit/transport/test_doh.c \
	tests/unit/transport/selfsigned.h
# test_doq includes src/transport/doq.c (its file-private stream logic): the library's doq.o
# is then not pulled in (the test's own object defines every symbol it would).
tests_unit_transport_test_doq_SOURCES = tests/unit/transport/test_doq.c
endif
