#include <cstdio>
#include <string>
#include <vector>

// Prints the words of `words` longer than `min_len` characters, one per line,
// and returns how many there were.
int print_long_words(const std::vector<std::string>& words, size_t min_len) {
  std::vector<std::string> long_words;
  for (const auto& w : words) {
    if (w.size() > min_len) long_words.push_back(w);
  }
  for (const auto& w : long_words) std::printf("%s\n", w.c_str());
  return static_cast<int>(long_words.size());
}

int main() {
  std::vector<std::string> words = {"checkpoint", "fork", "rollback", "clang"};
  return print_long_words(words, 5) == 2 ? 0 : 1;
}
