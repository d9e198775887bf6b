# src/genlist: dnsvolley-genlist, the query-list generator.
libdnsvolley_la_SOURCES += src/genlist/genlist.c src/genlist/genlist.h \
	src/genlist/model.c src/genlist/model.h
bin_PROGRAMS += dnsvolley-genlist
dnsvolley_genlist_SOURCES = src/genlist/genlist_main.c
dnsvolley_genlist_LDADD = $(DV_LIBS)
dist_man_MANS += doc/dnsvolley-genlist.1

if HAVE_CMOCKA
GENLIST_UNIT = tests/unit/genlist/test_genlist tests/unit/genlist/test_model
check_PROGRAMS += $(GENLIST_UNIT)
TESTS += $(GENLIST_UNIT)
endif
