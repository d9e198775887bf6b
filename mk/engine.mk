# engine: the replay engine (wire, engine, worker, run), command line, text report.
libdnsvolley_la_SOURCES += src/stats.c src/wire.c src/wire.h src/engine.c src/engine.h \
	src/worker.c src/worker.h src/run.c src/cli.c src/report_text.c

ENGINE_ITESTS = tests/integration/engine-counts.sh tests/integration/engine-window.sh \
	tests/integration/engine-rate.sh tests/integration/engine-errors.sh
TESTS += $(ENGINE_ITESTS)
TSAN_TESTS += tests/integration/engine-counts.sh tests/integration/engine-window.sh \
	tests/integration/engine-rate.sh tests/integration/engine-errors.sh
EXTRA_DIST += $(ENGINE_ITESTS) tests/integration/lib.sh

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_engine tests/unit/test_wire tests/unit/test_cli
tests_unit_test_engine_SOURCES = tests/unit/test_engine.c
tests_unit_test_engine_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_engine_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_wire_SOURCES = tests/unit/test_wire.c
tests_unit_test_wire_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_wire_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
tests_unit_test_cli_SOURCES = tests/unit/test_cli.c
tests_unit_test_cli_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cli_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_engine tests/unit/test_wire tests/unit/test_cli
endif
