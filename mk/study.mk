# study: the pass plan (cold/hot, repeats, targets, lists), flush hooks, readiness probe,
# the comparison table and summary, the JSON results file and `dnsvolley report`.
libdnsvolley_la_SOURCES += src/study.c src/study_report.h src/probe.c src/probe.h \
	src/results_json.c src/results_json.h src/sha256.c src/sha256.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_study tests/unit/test_results_json tests/unit/test_sha256
tests_unit_test_study_SOURCES = tests/unit/test_study.c
tests_unit_test_study_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_study_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_results_json_SOURCES = tests/unit/test_results_json.c
tests_unit_test_results_json_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_results_json_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_sha256_SOURCES = tests/unit/test_sha256.c
tests_unit_test_sha256_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_sha256_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_study tests/unit/test_results_json tests/unit/test_sha256
endif

TESTS += tests/integration/study-responder.sh tests/integration/study-real-servers.sh
EXTRA_DIST += tests/integration/study-responder.sh tests/integration/study-real-servers.sh \
	tests/integration/servers/nsd.conf.sh tests/integration/servers/unbound.conf.sh \
	tests/integration/servers/zone.sh doc/methodology.md doc/results-schema.md
