# engine: the replay engine (wire, engine, worker, run), command line, text report.
libdnsvolley_la_SOURCES += src/stats.c src/wire.c src/wire.h src/engine.c src/engine.h \
	src/worker.c src/worker.h src/run.c
