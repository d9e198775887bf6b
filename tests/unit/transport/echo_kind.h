/* echo_kind: a test's own transport kind (echo_kind.c), for test_kinds and test_echo_kind. */
#ifndef DV_TEST_ECHO_KIND_H
#define DV_TEST_ECHO_KIND_H

#include <stdint.h>

#include "transport/transport.h"

/* The row: datagrams, timers and a handshake of its own (doc/transports.md). */
extern const dv_tp_desc_t echo_desc;

/* Set before a pass: the hello's retransmission interval and how many retransmissions
 * before the connection gives up; the delay before a PONG answers a PING. */
extern uint64_t echo_rto_ns, echo_ack_delay_ns;
extern unsigned echo_max_retransmits;

/* Counted over every connection of the kind (one worker thread; read after the pass). */
typedef struct echo_counts {
	unsigned deadlines; /* on_deadline calls */
	unsigned hellos;    /* HELO datagrams queued (first and retransmitted) */
	unsigned pongs;     /* PONG datagrams queued */
	unsigned answers;   /* DNS messages reported */
	unsigned attached;  /* connections set up */
} echo_counts_t;
extern echo_counts_t echo_counts;

#endif
