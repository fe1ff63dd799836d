#include <vector>

// Returns the sum of the elements of v.
