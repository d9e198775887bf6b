# src/engine: the replay engine (window, pacer, counters, workers, one pass).
libdnsvolley_la_SOURCES += src/engine/window.c src/engine/window.h src/engine/pacer.c src/engine/pacer.h \
	src/engine/stats.c src/engine/stats.h src/engine/engine.c src/engine/engine.h \
	src/engine/worker.c src/engine/worker.h src/engine/run.c src/engine/run.h \
	src/engine/run_config.c src/engine/run_config.h \
	src/engine/sockstat.c src/engine/sockstat.h \
	src/engine/duetimer.c src/engine/duetimer.h \
	src/engine/txstamp.c src/engine/txstamp.h \
	src/engine/stream.c src/engine/stream.h
libdnsvolley_la_SOURCES += src/engine/servercost.c src/engine/servercost.h src/engine/srvstats.c src/engine/srvstats.h src/engine/srvcmd.c src/engine/srvcmd.h

if HAVE_CMOCKA
ENGINE_UNIT = tests/unit/engine/test_window tests/unit/engine/test_pacer tests/unit/engine/test_engine \
	tests/unit/engine/test_run tests/unit/engine/test_stats tests/unit/engine/test_sockstat \
	tests/unit/engine/test_stream tests/unit/engine/test_servercost tests/unit/engine/test_srvstats \
	tests/unit/engine/test_echo_kind tests/unit/engine/test_txstamp
check_PROGRAMS += $(ENGINE_UNIT)
TESTS += $(ENGINE_UNIT)
tests_unit_engine_test_echo_kind_SOURCES = tests/unit/engine/test_echo_kind.c \
	tests/unit/engine/streampass.h tests/unit/transport/echo_kind.c tests/unit/transport/echo_kind.h
tests_unit_engine_test_stream_SOURCES = tests/unit/engine/test_stream.c \
	tests/unit/engine/streampass.h
endif
