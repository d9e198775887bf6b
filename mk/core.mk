# core: shared helpers, the main binary and its man page.
libdnsvolley_la_SOURCES += src/util.c src/util.h src/atomicfile.c src/atomicfile.h \
	src/report.h src/cli.h src/study.h src/gates.h src/run.h src/stats.h

bin_PROGRAMS += dnsvolley
dnsvolley_SOURCES = src/main.c
dnsvolley_LDADD = $(DV_LIBS)
dist_man_MANS += doc/dnsvolley.1
EXTRA_DIST += doc/numbers.md doc/architecture.md doc/performance.md doc/benchmarks.md
