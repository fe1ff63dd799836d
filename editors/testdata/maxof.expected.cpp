#include <vector>

// Returns the largest element of v (0 when v is empty).
int max_of(const std::vector<int>& v) {
  int best = v.empty() ? 0 : v[0];
  for (int x : v) if (x > best) best = x;
  return best;
}
