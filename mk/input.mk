# src/input: query inputs compiled to wire format before the clock starts.
libdnsvolley_la_SOURCES += src/input/querylist.c src/input/querylist.h

if HAVE_CMOCKA
INPUT_UNIT = tests/unit/input/test_querylist
check_PROGRAMS += $(INPUT_UNIT)
TESTS += $(INPUT_UNIT)
endif
