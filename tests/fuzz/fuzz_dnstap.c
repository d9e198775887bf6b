/* fuzz_dnstap: libFuzzer target for the dnstap reader (Frame Streams + protobuf), and -B files. */
#include "config.h"

#include "fuzz_input_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* First byte: options (fuzz_input_common.h), bit 3 reads the rest as -B instead of dnstap. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return dv_fuzz_input(data, size,
	                     size > 0 && (data[0] & 8) ? DV_INPUT_BINARY : DV_INPUT_DNSTAP);
}
