/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a fuzzer's bytes as a sequence of events: each call takes the
 * next bytes of the input (zeros once it is used up), so every input is a
 * valid, bounded sequence.  Used by the libFuzzer harnesses and by the
 * deterministic replay driver (fuzz_driver.c).
 */
#ifndef SYNCTCP_FUZZ_INPUT_H
#define SYNCTCP_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline uint32_t fuzz_u(struct fuzz_in *in, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes--) {
		v <<= 8;
		if (in->left) {
			v |= *in->p++;
			in->left--;
		}
	}
	return v;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	return (uint8_t)fuzz_u(in, 1);
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	return (uint16_t)fuzz_u(in, 2);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	return fuzz_u(in, 4);
}

/* An invariant of the core: a violation aborts, which the fuzzer reports. */
#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

#endif /* SYNCTCP_FUZZ_INPUT_H */
