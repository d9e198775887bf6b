/* cli_replay: the replay option group of the command line (--input, -B, --timing, clients,
 * rewrites). */
#include "config.h"

#include "cmd/cli_replay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "input/input.h"

/* "ADDR/PREFIX" -> the range's first client address (see doc/dnsvolley.1) and its size. */
static int parse_client_range(dv_run_config_t *run, const char *val, dv_err_t *err)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(val, '/');
	uint64_t prefix, bits, size;
	size_t n = slash != NULL ? (size_t)(slash - val) : 0;

	memset(&run->client_base, 0, sizeof(run->client_base));
	if (slash == NULL || n == 0 || n >= sizeof(addr))
		goto bad;
	memcpy(addr, val, n);
	addr[n] = '\0';
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&run->client_base)->sin_addr) == 1) {
		run->client_base.ss_family = AF_INET;
		run->client_base_len = sizeof(struct sockaddr_in);
		bits = 32;
	} else if (inet_pton(AF_INET6, addr,
	                     &((struct sockaddr_in6 *)&run->client_base)->sin6_addr) == 1) {
		run->client_base.ss_family = AF_INET6;
		run->client_base_len = sizeof(struct sockaddr_in6);
		bits = 128;
	} else {
		goto bad;
	}
	if (dv_parse_u64(slash + 1, 1, bits, &prefix) != 0)
		goto bad;
	/* The network's own address is skipped unless the range is one address. */
	size = bits - prefix >= 32 ? UINT32_MAX : (1ull << (bits - prefix));
	if (size > 1) {
		size -= 1;
		if (bits == 32) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&run->client_base;
			uint32_t mask = (uint32_t)(0xffffffffull << (32 - prefix));
			s4->sin_addr.s_addr = htonl((ntohl(s4->sin_addr.s_addr) & mask) + 1);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&run->client_base;
			for (uint64_t b = prefix; b < 128; b++)
				s6->sin6_addr.s6_addr[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
			s6->sin6_addr.s6_addr[15] |= 1;
		}
	}
	run->client_range_size = size;
	return 0;
bad:
	run->client_base.ss_family = AF_UNSPEC;
	return dv_err_set(err, -EINVAL,
	                  "--client-range: '%s' is not ADDR/PREFIX (e.g. 127.0.0.0/8, fd00::/64)",
	                  val);
}

static int parse_factor(const char *flag, const char *val, uint64_t max, uint32_t *out,
                        dv_err_t *err)
{
	uint64_t v;

	if (dv_parse_u64(val, 1, max, &v) != 0)
		return dv_err_set(err, -EINVAL, "%s: '%s' is not a whole number from 1 to %llu",
		                  flag, val, (unsigned long long)max);
	*out = (uint32_t)v;
	return 0;
}

/* --capture-server ADDR[:PORT]: checked now, applied to each capture as it is read. */
static int capture_server(dv_replay_options_t *o, const char *val, dv_err_t *err)
{
	dv_input_options_t io;

	dv_input_options_init(&io);
	if (dv_input_set_server(&io, val, err) != 0)
		return dv_err_set(err, -EINVAL,
		                  "--capture-server: '%s' is not ADDR[:PORT] (e.g. 192.0.2.1, "
		                  "127.0.0.1:5300, [::1]:5300)",
		                  val);
	o->capture_server = val;
	return 0;
}

int dv_cli_replay_opt(dv_study_t *st, int c, const char *val, dv_err_t *err)
{
	dv_replay_options_t *o = &st->replay;

	switch (c) {
	case 'B':
	case 'u': /* dnsperf: -B and -u exclude each other */
		if (st->input_kind == (c == 'B' ? DV_INPUT_UPDATE : DV_INPUT_BINARY))
			return dv_err_set(err, -EINVAL,
			                  "-B and -u: a list is either -B messages or -u updates");
		st->input_kind = c == 'B' ? DV_INPUT_BINARY : DV_INPUT_UPDATE;
		return 0;
	case DV_OPT_INPUT:
		if (strcmp(val, "auto") == 0) {
			st->input_kind = DV_INPUT_AUTO;
			return 0;
		}
		if (dv_input_kind_parse(val, &st->input_kind, err) != 0)
			return dv_err_set(
			    err, -EINVAL,
			    "--input: '%s' is not pcap, dnstap, binary, text, update or auto", val);
		return 0;
	case DV_OPT_TIMING:
		return dv_replay_timing_parse(val, &o->timing, err);
	case DV_OPT_SPEED:
		if (dv_parse_double(val, 1e-6, 1e6, &o->speed) != 0)
			return dv_err_set(err, -EINVAL,
			                  "--speed: '%s' is not a factor above 0 (2 = twice as "
			                  "fast as captured)",
			                  val);
		return 0;
	case DV_OPT_CLIENT_RANGE:
		return parse_client_range(&st->run, val, err);
	case DV_OPT_MAX_CLIENTS:
		return parse_factor("--max-clients", val, 100000, &o->max_clients, err);
	case DV_OPT_MULTIPLY:
		return parse_factor("--multiply", val, 1000, &o->multiply, err);
	case DV_OPT_STRIP_EDNS_OPTIONS:
		o->strip_edns_options = true;
		return 0;
	case DV_OPT_STRIP_ECS:
		o->strip_ecs = true;
		return 0;
	case DV_OPT_FORCE_RD:
		o->force_rd = true;
		return 0;
	case DV_OPT_CAPTURE_SERVER:
		return capture_server(o, val, err);
	}
	return DV_CLI_REPLAY_NOT_MINE;
}

int dv_cli_replay_finish(dv_study_t *st, dv_err_t *err)
{
	(void)err;
	st->run.timing_original = st->replay.timing == DV_TIMING_ORIGINAL;
	st->run.speed = st->replay.speed;
	/* More clients than addresses: merged like --max-clients (client c -> c mod size). */
	if (st->run.client_base.ss_family != AF_UNSPEC &&
	    st->run.client_range_size < st->replay.max_clients)
		st->replay.max_clients = (uint32_t)st->run.client_range_size;
	return 0;
}

void dv_cli_replay_usage(FILE *out)
{
	fputs("Replay (captured traffic; doc/querylists.md):\n"
	      "  --input pcap|dnstap|binary|text|update|auto  kind of every -d input (auto:\n"
	      "                         detect)\n"
	      "  -B                     dnsperf's binary format (= --input binary)\n"
	      "  -u                     dynamic updates in dnsperf's format (= --input update)\n"
	      "  --timing list|original  list order only (list), or each query at its captured\n"
	      "                         offset (original)\n"
	      "  --speed X              --timing original: the offsets divided by X (1)\n"
	      "  --client-range ADDR/PREFIX  a source address per client (default: a port each)\n"
	      "  --max-clients N        clients beyond N merged (client mod N) (1000)\n"
	      "  --multiply N           N rotated copies with disjoint clients\n"
	      "  --strip-edns-options  --strip-ecs  --force-rd   query rewrites\n"
	      "  --capture-server ADDR[:PORT]  take the queries sent to this server from a\n"
	      "                         capture (default: to port 53, any address)\n",
	      out);
}
