# core: shared helpers, the main binary and its man page.
libdnsvolley_la_SOURCES += src/util.c src/util.h

bin_PROGRAMS += dnsvolley
dnsvolley_SOURCES = src/main.c
dnsvolley_LDADD = $(DV_LIBS)
