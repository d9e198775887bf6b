# bench: the engine's building blocks (histogram, window, pacer), their unit
# tests, and the replay benchmark (bench/floor + bench/*.sh).
libdnsvolley_la_SOURCES += src/histogram.c src/histogram.h src/window.c src/window.h \
	src/pacer.c src/pacer.h
