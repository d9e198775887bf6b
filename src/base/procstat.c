/* procstat: reads a process's /proc files (stat, status, task/, fd/) into one reading. */
#include "config.h"

#include "base/procstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void dv_cpumask_set(dv_cpumask_t *m, unsigned cpu)
{
	if (cpu < 64 * DV_CPUMASK_WORDS)
		m->w[cpu / 64] |= 1ull << (cpu % 64);
}

static bool cpumask_has(const dv_cpumask_t *m, unsigned cpu)
{
	return cpu < 64 * DV_CPUMASK_WORDS && (m->w[cpu / 64] >> (cpu % 64) & 1) != 0;
}

bool dv_cpumask_empty(const dv_cpumask_t *m)
{
	for (int i = 0; i < DV_CPUMASK_WORDS; i++)
		if (m->w[i] != 0)
			return false;
	return true;
}

bool dv_cpumask_and(dv_cpumask_t *a, const dv_cpumask_t *b)
{
	for (int i = 0; i < DV_CPUMASK_WORDS; i++)
		a->w[i] &= b->w[i];
	return !dv_cpumask_empty(a);
}

void dv_cpumask_or(dv_cpumask_t *a, const dv_cpumask_t *b)
{
	for (int i = 0; i < DV_CPUMASK_WORDS; i++)
		a->w[i] |= b->w[i];
}

void dv_cpumask_format(const dv_cpumask_t *m, char *buf, size_t len)
{
	size_t used = 0;
	unsigned c = 0, top = 64 * DV_CPUMASK_WORDS;

	if (len == 0)
		return;
	buf[0] = '\0';
	while (c < top) {
		unsigned end;
		int n;

		if (!cpumask_has(m, c)) {
			c++;
			continue;
		}
		for (end = c; end + 1 < top && cpumask_has(m, end + 1); end++)
			;
		n = end == c ? snprintf(buf + used, len - used, "%s%u", used ? "," : "", c)
		             : snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "", c, end);
		if (n < 0 || (size_t)n >= len - used)
			return; /* cut; snprintf ended it */
		used += (size_t)n;
		c = end + 1;
	}
}

int dv_cpumask_parse(const char *text, dv_cpumask_t *m)
{
	const char *p = text;

	memset(m, 0, sizeof(*m));
	while (*p != '\0' && *p != '\n') {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b;

		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		for (unsigned long c = a; c <= b && c < 64 * DV_CPUMASK_WORDS; c++)
			dv_cpumask_set(m, (unsigned)c);
		p = end;
		if (*p == ',')
			p++;
		else if (*p != '\0' && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

int dv_procstat_parse_stat(const char *line, char comm[32], uint64_t *utime, uint64_t *stime,
                           uint64_t *start, int *processor)
{
	/* "PID (COMM) S ppid ...": COMM may hold spaces and parentheses, so it ends at the
	 * last ')'. Fields after it are numbered from 3 (the state). */
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	unsigned long long v[40] = {0};
	const char *p;
	int field;

	if (open == NULL || close == NULL || close < open)
		return -EINVAL;
	size_t n = (size_t)(close - open - 1);
	n = n < 31 ? n : 31;
	memcpy(comm, open + 1, n);
	comm[n] = '\0';
	p = close + 1;
	for (field = 3; field <= 39; field++) {
		char *end;
		while (*p == ' ')
			p++;
		if (field == 3) { /* the state letter */
			if (*p == '\0' || *p == '\n')
				return -EINVAL;
			p++;
			continue;
		}
		v[field] = strtoull(p, &end, 10);
		if (end == p) {
			if (*p == '-') { /* a negative field (priority, nice): skip it */
				(void)strtoll(p, &end, 10);
				if (end == p)
					return -EINVAL;
			} else {
				return -EINVAL;
			}
		}
		p = end;
	}
	*utime = v[14];
	*stime = v[15];
	*start = v[22];
	*processor = (int)v[39];
	return 0;
}

static uint64_t status_value(const char *text, const char *key, bool *found)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			*found = true;
			return strtoull(p + klen + 1, NULL, 10);
		}
		p = strchr(p, '\n');
		p = p != NULL ? p + 1 : NULL;
	}
	*found = false;
	return 0;
}

void dv_procstat_parse_status(const char *text, bool with_memory, dv_procstat_t *ps)
{
	bool found;
	uint64_t v;

	ps->vcsw += status_value(text, "voluntary_ctxt_switches", &found);
	ps->ivcsw += status_value(text, "nonvoluntary_ctxt_switches", &found);
	if (!with_memory)
		return;
	v = status_value(text, "VmRSS", &found);
	if (found)
		ps->rss_kb = v;
	v = status_value(text, "VmHWM", &found);
	if (found)
		ps->hwm_kb = v;
	const char *cpus = strstr(text, "\nCpus_allowed_list:");
	if (cpus != NULL) {
		cpus += strlen("\nCpus_allowed_list:");
		while (*cpus == ' ' || *cpus == '\t')
			cpus++;
		(void)dv_cpumask_parse(cpus, &ps->allowed);
	}
}

/* The whole of a small /proc file into buf (ended); 0 or a negative errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + used, len - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int rc = -errno;
			close(fd);
			return rc;
		}
		if (n == 0 || used + (size_t)n >= len - 1) {
			used += (size_t)(n > 0 ? n : 0);
			break;
		}
		used += (size_t)n;
	}
	buf[used] = '\0';
	close(fd);
	return 0;
}

/* One thread's stat (CPU it ran on) and status (context switches) into ps. */
static void read_task(const char *root, pid_t pid, const char *tid, dv_procstat_t *ps)
{
	char path[256], buf[4096], comm[32];
	uint64_t u, s, st;
	int cpu;

	snprintf(path, sizeof(path), "%s/%d/task/%s/stat", root, (int)pid, tid);
	if (read_small(path, buf, sizeof(buf)) == 0 &&
	    dv_procstat_parse_stat(buf, comm, &u, &s, &st, &cpu) == 0 && cpu >= 0)
		dv_cpumask_set(&ps->ran, (unsigned)cpu);
	snprintf(path, sizeof(path), "%s/%d/task/%s/status", root, (int)pid, tid);
	if (read_small(path, buf, sizeof(buf)) == 0) {
		dv_procstat_parse_status(buf, false, ps);
		ps->threads++;
	}
}

int dv_procstat_read(const char *root, pid_t pid, dv_procstat_t *ps)
{
	char path[256], buf[4096];
	DIR *d;
	struct dirent *de;
	int rc, cpu;

	memset(ps, 0, sizeof(*ps));
	snprintf(path, sizeof(path), "%s/%d/stat", root, (int)pid);
	rc = read_small(path, buf, sizeof(buf));
	if (rc != 0)
		return rc == -ENOENT ? -ESRCH : rc;
	if (dv_procstat_parse_stat(buf, ps->comm, &ps->utime_ticks, &ps->stime_ticks,
	                           &ps->start_ticks, &cpu) != 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%d/status", root, (int)pid);
	rc = read_small(path, buf, sizeof(buf));
	if (rc != 0)
		return rc == -ENOENT ? -ESRCH : rc;
	dv_procstat_parse_status(buf, true, ps);
	ps->vcsw = ps->ivcsw = 0; /* the leader's own: summed again over the tasks below */
	snprintf(path, sizeof(path), "%s/%d/task", root, (int)pid);
	d = opendir(path);
	if (d == NULL)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			read_task(root, pid, de->d_name, ps);
	}
	closedir(d);
	return ps->threads > 0 ? 0 : -ESRCH;
}

int dv_procstat_reset_peak(pid_t pid)
{
	char path[64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "5", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

/* Does one process hold one of the inodes? -1: its fd folder cannot be read. */
static int holds_inode(const char *root, const char *pid, const uint64_t *inodes, size_t n)
{
	char path[256], link[64];
	DIR *d;
	struct dirent *de;
	int found = 0;

	snprintf(path, sizeof(path), "%s/%s/fd", root, pid);
	d = opendir(path);
	if (d == NULL)
		return errno == ENOENT ? 0 : -1;
	while (!found && (de = readdir(d)) != NULL) {
		char fdpath[300];
		ssize_t len;
		uint64_t ino;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		len = readlink(fdpath, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%" SCNu64 "]", &ino) != 1)
			continue;
		for (size_t i = 0; i < n && !found; i++)
			found = inodes[i] == ino;
	}
	closedir(d);
	return found;
}

int dv_procstat_holds(const char *root, pid_t pid, const uint64_t *inodes, size_t n)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", (int)pid);
	return holds_inode(root, name, inodes, n);
}

pid_t dv_procstat_socket_owner(const char *root, const uint64_t *inodes, size_t n,
                               unsigned *unreadable)
{
	DIR *d;
	struct dirent *de;
	pid_t best = 0;

	if (unreadable != NULL)
		*unreadable = 0;
	if (n == 0 || (d = opendir(root)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		int h;

		if (end == de->d_name || *end != '\0' || pid <= 0)
			continue;
		if (best != 0 && pid >= best)
			continue;
		h = holds_inode(root, de->d_name, inodes, n);
		if (h < 0 && unreadable != NULL)
			(*unreadable)++;
		if (h > 0)
			best = (pid_t)pid;
	}
	closedir(d);
	return best;
}
