# src/base: helpers every layer may use (no dnsvolley includes but base/).
libdnsvolley_la_SOURCES += src/base/util.c src/base/util.h src/base/atomicfile.c src/base/atomicfile.h \
	src/base/histogram.c src/base/histogram.h src/base/wire.c src/base/wire.h src/base/dns.h src/base/h2.h \
	src/base/proc.c src/base/proc.h \
	src/base/sockaddr.c src/base/sockaddr.h

if HAVE_CMOCKA
BASE_UNIT = tests/unit/base/test_histogram tests/unit/base/test_wire tests/unit/base/test_util tests/unit/base/test_atomicfile tests/unit/base/test_proc \
	tests/unit/base/test_procstat tests/unit/base/test_capture
check_PROGRAMS += $(BASE_UNIT)
TESTS += $(BASE_UNIT)
endif
libdnsvolley_la_SOURCES += src/base/procstat.c src/base/procstat.h src/base/syscount.c src/base/syscount.h
libdnsvolley_la_SOURCES += src/base/escape.c src/base/escape.h src/base/capture.c src/base/capture.h
libdnsvolley_la_SOURCES += src/base/b64url.c src/base/b64url.h
# The kernel's software receive stamps switched on before a run's load (the wire clock)
libdnsvolley_la_SOURCES += src/base/netstamp.c src/base/netstamp.h
# DNS over QUIC: what the client kind and the responder share (RFC 9250 codes, connection setup)
libdnsvolley_la_SOURCES += src/base/doq.c src/base/doq.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/base/test_b64url tests/unit/base/test_sockaddr tests/unit/base/test_netstamp
TESTS += tests/unit/base/test_b64url tests/unit/base/test_sockaddr tests/unit/base/test_netstamp
endif
