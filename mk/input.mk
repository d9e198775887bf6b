# src/input: query inputs compiled to wire format before the clock starts:
# text lists (querylist), dnsperf -B, pcap/pcapng (libpcap) and dnstap (input.h).
libdnsvolley_la_SOURCES += src/input/querylist.c src/input/querylist.h \
	src/input/input.c src/input/input.h src/input/input_types.h src/input/capbuild.c src/input/capbuild.h \
	src/input/binary.c src/input/pcap.c src/input/dnstap.c src/input/replay.c src/input/replay.h \
	src/input/qflags.c src/input/qflags.h src/input/tsig.c src/input/tsig.h \
	src/input/update.c src/input/update.h

if HAVE_CMOCKA
INPUT_UNIT = tests/unit/input/test_querylist tests/unit/input/test_input tests/unit/input/test_replay \
	tests/unit/input/test_qflags tests/unit/input/test_tsig tests/unit/input/test_update
check_PROGRAMS += $(INPUT_UNIT)
TESTS += $(INPUT_UNIT)
tests_unit_input_test_input_LDADD = $(LDADD) $(FSTRM_LIBS)
endif

# input-dump: prints what an input loads to (counts, clients, first malformed);
# used by tests/integration/input-{capture,dnstap}.sh and bench/load-pcap.sh.
check_PROGRAMS += tests/helpers/input-dump
tests_helpers_input_dump_SOURCES = tests/helpers/input-dump.c
tests_helpers_input_dump_LDADD = $(DV_LIBS)
TESTS += tests/integration/input-capture.sh tests/integration/input-dnstap.sh
EXTRA_DIST += tests/integration/input-capture.sh tests/integration/input-dnstap.sh \
	bench/load-pcap.sh

# Replaying captures (issue 17): the test's own capture writer and offset checker.
TESTS += tests/integration/replay-capture.sh tests/integration/replay-dnstap.sh \
	tests/integration/replay-zipf-unbound.sh
EXTRA_DIST += tests/integration/replay-capture.sh tests/integration/replay-dnstap.sh \
	tests/integration/replay-zipf-unbound.sh tests/helpers/write-capture.py \
	tests/helpers/capture-offsets.py bench/replay-capture.sh
