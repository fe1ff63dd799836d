#include <vector>

// Returns the sum of the elements of v.
int sum(const std::vector<int>& v) {

