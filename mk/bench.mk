# bench: the engine's building blocks (histogram, window, pacer), their unit
# tests, and the replay benchmark (bench/floor + bench/*.sh).
libdnsvolley_la_SOURCES += src/histogram.c src/histogram.h src/window.c src/window.h \
	src/pacer.c src/pacer.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_histogram tests/unit/test_window tests/unit/test_pacer
tests_unit_test_histogram_SOURCES = tests/unit/test_histogram.c
tests_unit_test_histogram_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_histogram_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_window_SOURCES = tests/unit/test_window.c
tests_unit_test_window_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_window_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_pacer_SOURCES = tests/unit/test_pacer.c
tests_unit_test_pacer_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_pacer_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_histogram tests/unit/test_window tests/unit/test_pacer
endif

# The kernel-floor client for bench/replay.sh. Built with `make` (quickstart demo)
# but not installed. If another fragment ever needs noinst_PROGRAMS too, one of
# the two "=" below must become "+=" in the fragment included later.
noinst_PROGRAMS = bench/floor
bench_floor_SOURCES = bench/floor.c
EXTRA_DIST += bench/replay.sh doc/benchmarks.md
