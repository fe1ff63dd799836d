#include <vector>

// Returns the largest element of v (0 when v is empty).
int max_of(const std::vector<int>& v) {
