/* fuzz_pcap: libFuzzer target for the pcap/pcapng reader (UDP, TCP reassembly, link types). */
#include "config.h"

#include "fuzz_input_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* First byte: options (fuzz_input_common.h); the rest: a capture file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return dv_fuzz_input(data, size, DV_INPUT_PCAP);
}
