# engine: the replay engine (wire, engine, worker, run), command line, text report.
libdnsvolley_la_SOURCES += src/stats.c src/wire.c src/wire.h src/engine.c src/engine.h \
	src/worker.c src/worker.h src/run.c src/cli.c src/report_text.c

ENGINE_ITESTS = tests/integration/engine-counts.sh tests/integration/engine-window.sh \
	tests/integration/engine-rate.sh tests/integration/engine-errors.sh
TESTS += $(ENGINE_ITESTS)
TSAN_TESTS += tests/integration/engine-window.sh tests/integration/engine-errors.sh
EXTRA_DIST += $(ENGINE_ITESTS) tests/integration/lib.sh
