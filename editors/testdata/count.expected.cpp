#include <vector>

// Returns how many elements of v are positive.
int count_pos(const std::vector<int>& v) {
  int n = 0;
  for (int x : v) if (x > 0) ++n;
  return n;
}
