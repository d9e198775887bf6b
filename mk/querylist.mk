# querylist: list loading/compiling, the dnsvolley-genlist generator, bundled lists.
libdnsvolley_la_SOURCES += src/querylist.c src/querylist.h src/genlist.c src/genlist.h

bin_PROGRAMS += dnsvolley-genlist
dnsvolley_genlist_SOURCES = src/genlist_main.c
dnsvolley_genlist_LDADD = $(DV_LIBS)
dist_man_MANS += doc/dnsvolley-genlist.1

# Loader used by bench/load-querylist.sh (built by `make check` or `make bench/ql-load`).
check_PROGRAMS += bench/ql-load
bench_ql_load_SOURCES = bench/ql-load.c
bench_ql_load_LDADD = $(DV_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_querylist
tests_unit_test_querylist_SOURCES = tests/unit/test_querylist.c
tests_unit_test_querylist_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_querylist_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_querylist

check_PROGRAMS += tests/unit/test_genlist
tests_unit_test_genlist_SOURCES = tests/unit/test_genlist.c
tests_unit_test_genlist_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_genlist_LDADD = $(DV_LIBS) $(CMOCKA_LIBS)
TESTS += tests/unit/test_genlist
endif

TESTS += tests/integration/genlist.sh
EXTRA_DIST += tests/integration/genlist.sh
EXTRA_DIST += querylists/README.md querylists/make-domains.sh querylists/domains.txt \
	querylists/soa.txt querylists/www-a.txt querylists/mixed.txt
EXTRA_DIST += doc/querylists.md bench/load-querylist.sh bench/gen-big-list.sh
