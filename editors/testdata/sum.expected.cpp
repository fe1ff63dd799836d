#include <vector>

// Returns the sum of the elements of v.
int sum(const std::vector<int>& v) {
  int total = 0;
  for (int x : v) total += x;
  return total;
}

