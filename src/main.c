/* main: the dnsvolley command: wires cli, query list, run and reports together. */
#include "config.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "dnsvolley: not built yet\n");
	return 2;
}
