#include <cstdio>
#include <string>
#include <vector>

// Prints the words of `words` longer than `min_len` characters, one per line,
// and returns how many there were.
int print_long_words(const std::vector<std::string>& words, size_t min_len) {
