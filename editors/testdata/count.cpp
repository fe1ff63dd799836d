#include <vector>

// Returns how many elements of v are positive.
int count_pos(const std::vector<int>& v) {
