// SPDX-License-Identifier: GPL-2.0
/*
 * Without libFuzzer (no clang): replay the seed corpus given on the
 * command line, then N deterministic pseudo-random inputs (xorshift, a
 * fixed seed), under ASan/UBSan, through the same LLVMFuzzerTestOneInput.
 *
 *   fuzz_X-replay [-runs=N] [-seed=S] FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	unsigned long runs = 10000, n, files = 0;
	uint64_t seed = 0x5354u;
	static uint8_t buf[1 << 16];
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f;
		size_t len;

		if (!strncmp(argv[i], "-runs=", 6)) {
			runs = strtoul(argv[i] + 6, NULL, 10);
			continue;
		}
		if (!strncmp(argv[i], "-seed=", 6)) {
			seed = strtoull(argv[i] + 6, NULL, 0) | 1;
			continue;
		}
		f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		files++;
	}
	for (n = 0; n < runs; n++) {
		size_t len = xorshift(&seed) % 4096, k;

		for (k = 0; k < len; k++)
			buf[k] = (uint8_t)xorshift(&seed);
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("%s: %lu corpus files, %lu random inputs, no crash\n",
	       argv[0], files, runs);
	return 0;
}
