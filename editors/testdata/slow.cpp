#include <cstdio>

// Prints a long table (the stand-in model answers this one slowly, for the cancel tests).
void table() {

