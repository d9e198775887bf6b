/* fuzz_csv: libFuzzer target for the history CSV reader used by plot (dv_csv_read_buffer). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Is s a UTC time YYYY-MM-DDTHH:MM:SSZ (the reader promises it for every row's date)? */
static int is_time(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:ddZ";

	for (size_t i = 0; i < sizeof(pat) - 1; i++)
		if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != pat[i])
			return 0;
	return s[sizeof(pat) - 1] == '\0';
}

/*
 * Any bytes: either a table comes back, every row with dv_csv_ncolumns non-NULL fields and a
 * date that is a UTC time (plot writes it into its data files), or an error with a message
 * and an empty table.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dv_csv_table_t t;
	dv_err_t err;
	int cd = dv_csv_column("date");

	memset(&err, 0, sizeof(err));
	if (dv_csv_read_buffer((const char *)data, size, "fuzz.csv", &t, &err) != 0) {
		if (err.msg[0] == '\0' || t.n != 0 || t.rows != NULL)
			abort();
		return 0;
	}
	for (size_t r = 0; r < t.n; r++) {
		for (size_t c = 0; c < dv_csv_ncolumns; c++)
			if (t.rows[r][c] == NULL)
				abort();
		if (!is_time(t.rows[r][cd]))
			abort();
	}
	dv_csv_table_free(&t);
	return 0;
}
