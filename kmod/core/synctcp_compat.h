/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel/user-space compatibility for the synctcp algorithm cores.
 *
 * The cores (ott.c, pqlen.c, pcwnd.c, ...) are plain C that the kernel
 * modules compile in and the user-space unit tests and fuzzers
 * (kmod/tests, kmod/tests/fuzz) compile as they are, so the tests run
 * exactly the code the kernel runs.  This header gives both worlds the
 * few kernel types and helpers the cores use.
 */
#ifndef SYNCTCP_COMPAT_H
#define SYNCTCP_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/math64.h>
#include <linux/time64.h>
#include <net/tcp.h>	/* before(), after() */
#else
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define USEC_PER_SEC	1000000UL
#define USEC_PER_MSEC	1000UL
#define U32_MAX		((u32)~0U)
#define S64_MAX		((s64)(~0ULL >> 1))
#define S32_MAX		((s32)(~0U >> 1))

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define min_t(type, x, y) ({ type __x = (x), __y = (y); __x < __y ? __x : __y; })
#define max_t(type, x, y) ({ type __x = (x), __y = (y); __x > __y ? __x : __y; })
#define clamp_t(type, v, lo, hi) min_t(type, max_t(type, v, lo), hi)

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline s64 div64_s64(s64 dividend, s64 divisor)
{
	return dividend / divisor;
}

static inline s64 div_s64(s64 dividend, s32 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = (u32)(dividend % divisor);
	return dividend / divisor;
}

/*
 * a * b / c with a 128-bit product, as the kernel's mul_u64_u64_div_u64():
 * on x86-64 the same mulq/divq pair as arch/x86/include/asm/div64.h, so
 * that the per-ACK cost measured here (kmod/tests/bench) is the kernel's.
 * The quotient must fit 64 bits (divq faults otherwise, as in the kernel).
 */
static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
#if defined(__x86_64__)
	u64 q;

	asm ("mulq %2; divq %3" : "=a" (q) : "a" (a), "rm" (b), "rm" (c) : "rdx");
	return q;
#else
	return (u64)(((__uint128_t)a * b) / c);
#endif
}

/* Sequence-space comparison, as include/net/tcp.h defines it. */
static inline bool before(u32 seq1, u32 seq2)
{
	return (s32)(seq1 - seq2) < 0;
}

#define after(seq2, seq1)	before(seq1, seq2)
#endif /* __KERNEL__ */

#endif /* SYNCTCP_COMPAT_H */
