/* maxrss: run a command and write its peak resident set size (KiB, from wait4) to a file. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Usage: maxrss OUTFILE COMMAND [ARGS...]
 * Exits with the command's status (128 + signal when killed) and writes
 * ru_maxrss in KiB to OUTFILE: the same figure as VmHWM, without depending on
 * /usr/bin/time being installed.
 */
int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: maxrss OUTFILE COMMAND [ARGS...]\n");
		return 125;
	}
	pid = fork();
	if (pid < 0) {
		perror("maxrss: fork");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "maxrss: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("maxrss: wait4");
			return 125;
		}
	}
	out = fopen(argv[1], "w");
	if (out == NULL || fprintf(out, "%ld\n", ru.ru_maxrss) < 0 || fclose(out) != 0) {
		fprintf(stderr, "maxrss: cannot write %s\n", argv[1]);
		return 125;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
