#include <stddef.h>

// Returns the sum of the n ints at v.
long sum_c(const int *v, size_t n) {
  long acc = 0;
  for (const int *restrict p = v; p < v + n; p++) acc += *p;
  return acc;
}

