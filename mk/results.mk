# results: history CSV, dns-metrics JSON lines, gates, JUnit, compare and plot (issue 5).
libdnsvolley_la_SOURCES += src/gates.c src/csv.c src/csv.h src/metrics.c src/metrics.h \
	src/compare.c src/compare.h src/junit.c src/junit.h src/plot.c src/plot.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_gates tests/unit/test_csv tests/unit/test_compare \
	tests/unit/test_metrics
tests_unit_test_gates_SOURCES = tests/unit/test_gates.c
tests_unit_test_gates_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_gates_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_csv_SOURCES = tests/unit/test_csv.c
tests_unit_test_csv_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_csv_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_compare_SOURCES = tests/unit/test_compare.c
tests_unit_test_compare_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_compare_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_metrics_SOURCES = tests/unit/test_metrics.c
tests_unit_test_metrics_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_metrics_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_gates tests/unit/test_csv tests/unit/test_compare \
	tests/unit/test_metrics
endif

TESTS += tests/integration/nightly.sh tests/integration/plot.sh
EXTRA_DIST += tests/integration/nightly.sh tests/integration/plot.sh doc/nightly.md
