/* fuzz_results: libFuzzer target for the results-file reader used by compare and --baseline. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/results_json.h"
#include "study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Any bytes: either a study comes back (then it must survive being written out
 * again and freed) or an error with a message and a zeroed study.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dv_study_t s;
	dv_err_t err;
	char *again;

	memset(&err, 0, sizeof(err));
	if (dv_results_read_buffer((const char *)data, size, "fuzz.json", &s, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return 0;
	}
	again = dv_results_dump_json(&s, &err);
	free(again);
	dv_study_free(&s);
	return 0;
}
