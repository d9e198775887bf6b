# AF_XDP (doc/xdp.md): dnsvolley --xdp and dnsvolley-responder --xdp.
# base/netframe (Ethernet, IP and UDP headers, checksums) builds always and is unit
# tested everywhere; the rest needs libxdp, libbpf and clang (configure's XDP block).
libdnsvolley_la_SOURCES += src/base/netframe.c src/base/netframe.h \
	src/engine/rxstamp.c src/engine/rxstamp.h src/engine/rxstamp_meta.h \
	src/base/xdpload.h src/base/xsk.h src/engine/xdp.h src/base/xdp_meta.h src/responder/xdp.h src/responder/xdp_counts.h \
	src/responder/xsk.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/base/test_netframe
TESTS += tests/unit/base/test_netframe
endif
EXTRA_DIST += src/engine/xdp_steer.bpf.c src/responder/xdp_reflect.bpf.c \
	src/responder/xdp_xsk.bpf.c src/engine/rx_stamp.bpf.c src/base/xdp_udp.bpf.h \
	src/responder/xdp_conf.bpf.h
dist_doc_DATA += doc/xdp.md
if HAVE_XDP
AM_CFLAGS += $(XDP_CFLAGS)
DV_LIBS += $(XDP_LIBS)
libdnsvolley_la_SOURCES += src/base/xdpload.c src/base/xsk.c src/engine/xdp.c src/responder/xdp.c \
	src/responder/xsk.c
# The BPF programs: compiled for the kernel's BPF machine (with BTF: -g, which
# libbpf needs for their maps), then embedded as a C array the loader opens from memory.
DV_BPF_GENERATED = src/engine/xdp_steer_obj.h src/responder/xdp_reflect_obj.h \
	src/responder/xdp_xsk_obj.h src/engine/rx_stamp_obj.h
BUILT_SOURCES = $(DV_BPF_GENERATED)
nodist_libdnsvolley_la_SOURCES = $(DV_BPF_GENERATED)
CLEANFILES += $(DV_BPF_GENERATED) src/engine/xdp_steer.bpf.o src/responder/xdp_reflect.bpf.o \
	src/responder/xdp_xsk.bpf.o src/engine/rx_stamp.bpf.o
AM_CPPFLAGS += -I$(top_builddir)/src
BPF_CFLAGS = -O2 -g -Wall -target bpf $(BPF_INCLUDES) -I$(top_srcdir)/src
src/engine/xdp_steer.bpf.o: src/engine/xdp_steer.bpf.c src/base/xdp_meta.h src/base/xdp_udp.bpf.h
	@$(MKDIR_P) src/engine
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@
# The receive-stamp socket filter (engine/rxstamp.c): its compare-and-swap is a BPF atomic
# instruction, which needs the v3 instruction set (kernel 5.12 on).
src/engine/rx_stamp.bpf.o: src/engine/rx_stamp.bpf.c src/engine/rxstamp_meta.h
	@$(MKDIR_P) src/engine
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -mcpu=v3 -c $< -o $@
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/responder/test_xdp_reflect tests/unit/responder/test_xdp_xsk \
	tests/unit/engine/test_xdp_steer tests/unit/engine/test_rx_stamp
TESTS += tests/unit/responder/test_xdp_reflect tests/unit/responder/test_xdp_xsk \
	tests/unit/engine/test_xdp_steer tests/unit/engine/test_rx_stamp
# The XDP program tests' frames and test runs, one definition.
DV_BPFFRAME = tests/unit/base/bpfframe.c tests/unit/base/bpfframe.h
tests_unit_responder_test_xdp_reflect_SOURCES = tests/unit/responder/test_xdp_reflect.c $(DV_BPFFRAME)
tests_unit_responder_test_xdp_xsk_SOURCES = tests/unit/responder/test_xdp_xsk.c $(DV_BPFFRAME)
tests_unit_engine_test_xdp_steer_SOURCES = tests/unit/engine/test_xdp_steer.c $(DV_BPFFRAME)
endif
src/responder/xdp_reflect.bpf.o: src/responder/xdp_reflect.bpf.c src/responder/xdp_counts.h \
	src/responder/xdp_conf.bpf.h src/base/dns.h
	@$(MKDIR_P) src/responder
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@
src/responder/xdp_xsk.bpf.o: src/responder/xdp_xsk.bpf.c src/responder/xdp_counts.h \
	src/responder/xdp_conf.bpf.h src/base/xdp_udp.bpf.h src/base/xdp_meta.h
	@$(MKDIR_P) src/responder
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@
# NAME_obj.h: "static const unsigned char NAME_obj[] = {...};" from NAME.bpf.o (od: coreutils).
src/engine/xdp_steer_obj.h: src/engine/xdp_steer.bpf.o
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/scripts/bpf-embed xdp_steer_obj $< >$@.tmp && mv $@.tmp $@
src/engine/rx_stamp_obj.h: src/engine/rx_stamp.bpf.o
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/scripts/bpf-embed rx_stamp_obj $< >$@.tmp && mv $@.tmp $@
src/responder/xdp_reflect_obj.h: src/responder/xdp_reflect.bpf.o
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/scripts/bpf-embed xdp_reflect_obj $< >$@.tmp && mv $@.tmp $@
src/responder/xdp_xsk_obj.h: src/responder/xdp_xsk.bpf.o
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/scripts/bpf-embed xdp_xsk_obj $< >$@.tmp && mv $@.tmp $@
endif
