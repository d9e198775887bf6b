/* study_report: `dnsvolley report FILE.json`: the table and summary again from a results file. */
#ifndef DV_STUDY_REPORT_H
#define DV_STUDY_REPORT_H

/*
 * argv[0] is the subcommand's name ("report"); a leading "dnsvolley" before it is
 * skipped too, so main may pass either its whole argv or argv + 1.
 * Usage: report [--table|--summary] FILE.json  (default: both)
 * Prints to stdout; errors ("FILE: why") to stderr. Returns the exit status:
 * 0 printed, 2 usage or input error.
 */
int dv_study_report_main(int argc, char **argv);

#endif
