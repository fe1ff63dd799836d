#include <stddef.h>

// Returns the sum of the n ints at v.
long sum_c(const int *v, size_t n) {

