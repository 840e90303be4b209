/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal unit-test harness for the algorithm cores.
 *
 * Each test is a function named after the paper rule it pins.  The run
 * ends with the plain closing line "N passed, N failed" and exits non-zero
 * on any failure.  Built with -fsanitize=address,undefined: a sanitizer
 * report aborts the run.
 */
#ifndef SYNCTCP_HARNESS_H
#define SYNCTCP_HARNESS_H

#include <stdio.h>
#include <stdlib.h>

static int harness_failed_checks;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",		\
			__FILE__, __LINE__, #cond);			\
		harness_failed_checks++;				\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		fprintf(stderr, "  %s:%d: %s == %s: %lld != %lld\n",	\
			__FILE__, __LINE__, #a, #b, _a, _b);		\
		harness_failed_checks++;				\
	}								\
} while (0)

#define CHECK_NEAR(a, b, tol) do {					\
	double _a = (double)(a), _b = (double)(b);			\
	if (_a - _b > (tol) || _b - _a > (tol)) {			\
		fprintf(stderr, "  %s:%d: %s ~ %s: %g vs %g (tol %g)\n", \
			__FILE__, __LINE__, #a, #b, _a, _b, (double)(tol)); \
		harness_failed_checks++;				\
	}								\
} while (0)

struct harness_test {
	const char *name;
	void (*fn)(void);
};

#define TEST(name) static void name(void)
#define T(name) { #name, name }

static inline int harness_run(const char *suite, const struct harness_test *t,
			      size_t n)
{
	size_t i, passed = 0, failed = 0;

	for (i = 0; i < n; i++) {
		int before = harness_failed_checks;

		t[i].fn();
		if (harness_failed_checks == before) {
			passed++;
			printf("ok   %s.%s\n", suite, t[i].name);
		} else {
			failed++;
			printf("FAIL %s.%s\n", suite, t[i].name);
		}
	}
	printf("%s: %zu passed, %zu failed\n", suite, passed, failed);
	return failed ? 1 : 0;
}

#define HARNESS_MAIN(suite, tests)					\
int main(void)								\
{									\
	return harness_run(suite, tests, sizeof(tests) / sizeof(tests[0])); \
}

#endif /* SYNCTCP_HARNESS_H */
