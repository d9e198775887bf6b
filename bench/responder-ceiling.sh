#!/usr/bin/env bash
# responder-ceiling: how many queries/s dnsvolley-responder answers, and its CPU cost per
# answer, against a bare sendmmsg/recvmmsg flood client and against dnsperf; responder
# pinned to one core, client to the other. Figures for doc/performance.md.
#
# usage: bench/responder-ceiling.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#   BUILD_DIR  where dnsvolley-responder was built (default: build)
#   SECONDS    length of each measurement (default 4)
#   ROUNDS     the whole set is run ROUNDS times, interleaved (default 2)
# Env: RESP_CPU (default 1), CLIENT_CPU (default 0), WINDOW (flood client, default 256).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
secs=${2:-4}
rounds=${3:-2}
resp_cpu=${RESP_CPU:-1}
client_cpu=${CLIENT_CPU:-0}
window=${WINDOW:-256}
responder="$build/dnsvolley-responder"
[ -x "$responder" ] || { echo "no $responder: build first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvceiling.XXXXXX")
rpid=""
trap '[ -n "$rpid" ] && kill -9 "$rpid" 2>/dev/null; rm -rf "$tmp"' EXIT

# The bare client: one connected UDP socket, a closed loop of WINDOW queries in flight,
# sendmmsg/recvmmsg in batches of 64. The floor any generator can reach on this host.
cat >"$tmp/flood.c" <<'EOF'
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#define B 64
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	/* www.example.com SOA, EDNS 1232 */
	static const uint8_t q[] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 3, 'w', 'w', 'w', 7, 'e',
				    'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 6, 0, 1,
				    0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0};
	uint8_t sbuf[B][sizeof(q)], rbuf[B][512];
	struct mmsghdr sm[B], rm[B];
	struct iovec si[B], ri[B];
	struct sockaddr_in a = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), buf = 8 << 20, i;
	double secs = atof(argv[2]), t0, t1, last_rx;
	long window = atol(argv[3]);
	uint64_t sent = 0, rcvd = 0, lost = 0, id = 0;
	struct rusage ru;

	a.sin_port = htons((uint16_t)atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return perror("connect"), 1;
	for (i = 0; i < B; i++) {
		memcpy(sbuf[i], q, sizeof(q));
		si[i] = (struct iovec){sbuf[i], sizeof(q)};
		ri[i] = (struct iovec){rbuf[i], sizeof(rbuf[i])};
		sm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &si[i], .msg_iovlen = 1}};
		rm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &ri[i], .msg_iovlen = 1}};
	}
	t0 = last_rx = now();
	while ((t1 = now()) - t0 < secs) {
		long room = window - (long)(sent - rcvd - lost);
		int n, k;
		if (room > 0) {
			n = room < B ? (int)room : B;
			for (i = 0; i < n; i++) {
				sbuf[i][0] = (uint8_t)(id >> 8);
				sbuf[i][1] = (uint8_t)id++;
			}
			k = sendmmsg(fd, sm, n, MSG_DONTWAIT);
			if (k > 0)
				sent += k;
		}
		k = recvmmsg(fd, rm, B, MSG_DONTWAIT, NULL);
		if (k > 0) {
			rcvd += k;
			last_rx = t1;
		} else if (t1 - last_rx > 0.2) { /* a lost batch must not shrink the window */
			lost = sent - rcvd;
			last_rx = t1;
		} else if (room <= 0) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			poll(&p, 1, 10);
		}
	}
	t1 = now();
	getrusage(RUSAGE_SELF, &ru);
	printf("sent %llu received %llu qps %.0f client_cpu_us_per_query %.2f\n",
	       (unsigned long long)sent, (unsigned long long)rcvd, rcvd / (t1 - t0),
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6) * 1e6 / (rcvd ? rcvd : 1));
	return 0;
}
EOF
cc -O2 -o "$tmp/flood" "$tmp/flood.c"

# The bare reflector: the least a UDP responder can do (recvmmsg, set QR, sendmmsg), as
# the yardstick for "keeps up": the responder's qps over this one's, same client, same run.
cat >"$tmp/bare.c" <<'EOF'
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#define B 64
static volatile sig_atomic_t stop;
static void on_sig(int s)
{
	(void)s;
	stop = 1;
}
int main(int argc, char **argv)
{
	static uint8_t buf[B][512];
	struct mmsghdr m[B];
	struct iovec io[B];
	struct sockaddr_in src[B], a = {.sin_family = AF_INET};
	struct timeval tv = {0, 100000};
	socklen_t al = sizeof(a);
	unsigned long long answered = 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20, i, n;
	FILE *f;

	signal(SIGINT, on_sig);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return perror("bind"), 1;
	getsockname(fd, (struct sockaddr *)&a, &al);
	f = fopen(argv[1], "w");
	fprintf(f, "%u\n", ntohs(a.sin_port));
	fclose(f);
	while (!stop) {
		for (i = 0; i < B; i++) {
			io[i] = (struct iovec){buf[i], sizeof(buf[i])};
			m[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &src[i],
							    .msg_namelen = sizeof(src[i]),
							    .msg_iov = &io[i], .msg_iovlen = 1}};
		}
		n = recvmmsg(fd, m, B, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		for (i = 0; i < n; i++) {
			buf[i][2] |= 0x80;
			io[i].iov_len = m[i].msg_len;
		}
		n = sendmmsg(fd, m, n, 0);
		if (n > 0)
			answered += n;
	}
	printf("answered %llu\n", answered);
	return 0;
}
EOF
cc -O2 -o "$tmp/bare" "$tmp/bare.c"

printf 'www.example.com SOA\nexample.com A\nmail.example.com AAAA\n' >"$tmp/queries.txt"
hz=$(getconf CLK_TCK)

# cpu_ticks PID: utime + stime of a process (all its threads), in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# measure LABEL CLIENT RESPONDER_FLAGS...: one run; prints a result line.
measure() {
	local label=$1 client=$2
	shift 2
	local pf="$tmp/port" out="$tmp/resp.out" cout="$tmp/client.out" c0 c1 t0 t1 port
	rm -f "$pf"
	if [ "${1:-}" = bare ]; then
		taskset -c "$resp_cpu" "$tmp/bare" "$pf" >"$out" &
	else
		taskset -c "$resp_cpu" "$responder" -a 127.0.0.1 -p 0 --port-file "$pf" -q "$@" >"$out" &
	fi
	rpid=$!
	for _ in $(seq 200); do [ -s "$pf" ] && break; sleep 0.025; done
	port=$(cat "$pf")
	c0=$(cpu_ticks "$rpid")
	t0=$(date +%s.%N)
	case $client in
	flood) taskset -c "$client_cpu" "$tmp/flood" "$port" "$secs" "$window" >"$cout" ;;
	dnsperf)
		taskset -c "$client_cpu" dnsperf -s 127.0.0.1 -p "$port" -d "$tmp/queries.txt" \
			-l "$secs" -c 1 -q "$window" >"$cout" 2>&1
		;;
	esac
	t1=$(date +%s.%N)
	c1=$(cpu_ticks "$rpid")
	local st=0
	kill -INT "$rpid" 2>/dev/null || true
	wait "$rpid" || st=$?
	rpid=""
	if [ "$st" != 0 ]; then
		echo "$label: server exited with status $st (ignored)" >&2
		return 0
	fi
	local answered client_qps client_cpu_us
	answered=$(awk '$1 == "answered" { print $2 }' "$out")
	if [ "$client" = flood ]; then
		client_qps=$(awk '{ print $6 }' "$cout")
		client_cpu_us=$(awk '{ print $8 }' "$cout")
	else
		client_qps=$(awk '/Queries per second:/ { printf "%.0f", $4 }' "$cout")
		client_cpu_us="-"
	fi
	awk -v l="$label" -v a="$answered" -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
		-v q="$client_qps" -v cu="$client_cpu_us" 'BEGIN {
		cpu = c / hz; el = t1 - t0
		printf "%-30s %9.0f qps  server %5.2f us/answer  %3.0f%% of its core  client %s us/query\n",
			l, q, (a > 0 ? cpu * 1e6 / a : 0), 100 * cpu / el, cu
	}'
}

echo "# responder on CPU $resp_cpu, client on CPU $client_cpu, ${secs}s each, window $window, $rounds rounds"
echo "# $(uname -r); $(nproc) cores; dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null || echo "?")"
for r in $(seq "$rounds"); do
	echo "# round $r"
	measure "flood   -> bare reflector" flood bare
	measure "flood   -> responder --reflect" flood --reflect
	measure "flood   -> responder (SOA)" flood
	measure "flood   -> responder --no-gso" flood --no-gso
	measure "dnsperf -> bare reflector" dnsperf bare
	measure "dnsperf -> responder (SOA)" dnsperf
done | tee "$tmp/lines"

# Medians over the rounds, and the responder's CPU per answer over the bare reflector's
# for the same client (the figure that survives a noisy machine: it is a ratio).
echo "# medians over $rounds rounds"
awk '
	!/^#/ {
		l = substr($0, 1, 30); sub(/ +$/, "", l); n[l]++
		match($0, /[0-9]+ qps/); q[l, n[l]] = substr($0, RSTART, RLENGTH - 4) + 0
		match($0, /[0-9.]+ us\/answer/); u[l, n[l]] = substr($0, RSTART, RLENGTH - 10) + 0
		if (!(l in seen)) { seen[l] = 1; order[++k] = l }
	}
	function med(a, l, cnt,   i, j, t, v) {
		for (i = 1; i <= cnt; i++) v[i] = a[l, i]
		for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
	}
	END {
		for (i = 1; i <= k; i++) {
			l = order[i]; mq[l] = med(q, l, n[l]); mu[l] = med(u, l, n[l])
			printf "%-30s %9.0f qps  server %5.2f us/answer\n", l, mq[l], mu[l]
		}
		for (i = 1; i <= k; i++) {
			l = order[i]; c = substr(l, 1, 8); b = c "-> bare reflector"
			if (l != b && (b in mu) && mu[b] > 0)
				printf "ratio %-24s cpu/answer %.2f x bare, qps %.2f x bare\n", l, mu[l] / mu[b], mq[l] / mq[b]
		}
	}' "$tmp/lines"
