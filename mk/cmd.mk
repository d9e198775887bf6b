# src/cmd: the dnsvolley program: command line and subcommands; only main.c has main().
# The subcommands are in the library too, so unit tests link them (tests/unit/cmd/).
libdnsvolley_la_SOURCES += src/cmd/cli.c src/cmd/cli.h src/cmd/cli_replay.c src/cmd/cli_replay.h src/cmd/cli_server.c src/cmd/cli_server.h src/cmd/target.c src/cmd/target.h \
	src/cmd/cmd.h src/cmd/cmd_compare.c src/cmd/cmd_plot.c \
	src/cmd/cmd_report.c src/cmd/cmd_merge.c src/cmd/cmd_history.c src/cmd/cmd_capacity.c src/cmd/cmd_resperf.c
bin_PROGRAMS += dnsvolley
dnsvolley_SOURCES = src/cmd/main.c
dnsvolley_LDADD = $(DV_LIBS)
# The exit statuses of main and every subcommand (doc/dnsvolley.1 EXIT STATUS).
libdnsvolley_la_SOURCES += src/cmd/exit_status.h
dist_man_MANS += doc/dnsvolley.1

if HAVE_CMOCKA
CMD_UNIT = tests/unit/cmd/test_cli tests/unit/cmd/test_cmd_capacity
check_PROGRAMS += $(CMD_UNIT)
TESTS += $(CMD_UNIT)
endif
