package compiledb

import "strings"

// OtherLanguageStandard drops from flags a -std of the other language than the file's (c: the
// file is C), and returns it: compile_flags.txt and a neighbour's entry give one set of flags
// for C and C++ files alike, so a -std=c++17 cannot be meant for a C file, and clang refuses the
// pair ("invalid argument '-std=c++17' not allowed with 'C'"; clangd shows that error and parses
// on, clangd/clangd#431).
func OtherLanguageStandard(flags []string, c bool) (kept, dropped []string) {
	kept = make([]string, 0, len(flags))
	for _, f := range flags {
		if v, ok := StdValue(f); ok {
			if cxx, known := StdIsCXX(v); known && cxx == c {
				dropped = append(dropped, f)
				continue
			}
		}
		kept = append(kept, f)
	}
	return kept, dropped
}

// StdValue is the standard a -std=/--std= flag names.
func StdValue(f string) (string, bool) {
	for _, p := range []string{"-std=", "--std="} {
		if strings.HasPrefix(f, p) {
			return strings.TrimPrefix(f, p), true
		}
	}
	return "", false
}

// StdIsCXX says whether standard v (c17, gnu++20, iso9899:1999, …) is C++'s; known is false for
// the others (OpenCL's cl2.0, CUDA, HIP), which are left alone.
func StdIsCXX(v string) (cxx, known bool) {
	switch {
	case strings.HasPrefix(v, "c++"), strings.HasPrefix(v, "gnu++"):
		return true, true
	case strings.HasPrefix(v, "c") && len(v) > 1 && v[1] >= '0' && v[1] <= '9',
		strings.HasPrefix(v, "gnu") && len(v) > 3 && v[3] >= '0' && v[3] <= '9',
		strings.HasPrefix(v, "iso9899:"):
		return false, true
	}
	return false, false
}
