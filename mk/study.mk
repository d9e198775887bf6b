# src/study: the pass plan (targets x lists x cold/hot x repeats), flushes, grouping, capacity, MPI.
libdnsvolley_la_SOURCES += src/study/study.c src/study/study.h src/study/groups.c src/study/groups.h src/study/groups_server.c \
	src/study/dist.c src/study/dist.h \
	src/study/capacity.c src/study/capacity.h
# The readiness probe and version.bind (only the study asks them).
libdnsvolley_la_SOURCES += src/study/probe.c src/study/probe.h src/study/probe_stream.c
# The MPI distribution (dist_mpi.c) only with configure --with-mpi.
if HAVE_MPI
libdnsvolley_la_SOURCES += src/study/dist_mpi.c
AM_CFLAGS += $(MPI_CFLAGS)
endif

if HAVE_CMOCKA
STUDY_UNIT = tests/unit/study/test_study tests/unit/study/test_dist tests/unit/study/test_capacity
check_PROGRAMS += $(STUDY_UNIT)
TESTS += $(STUDY_UNIT)
endif
