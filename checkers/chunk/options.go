package chunk

import "strings"

// Options says which lexical features the language being chunked has, as clang's LangOptions
// do. The zero value is clang 19's default C++ (gnu++17): raw strings, digit separators, '//'
// comments, digraphs and u/U/u8 literals on, trigraphs off.
type Options struct {
	// NoRawStrings turns off R"delim(…)delim" literals (C++ before C++11, C other than the
	// GNU modes from gnu99 on, -fno-raw-string-literals in C).
	NoRawStrings bool
	// NoDigitSeparators turns off 1'000 (C before C23, C++ before C++14).
	NoDigitSeparators bool
	// Trigraphs turns on ??= ??/ ??' ??( ??) ??! ??< ??> ??- (the ISO modes before C++17).
	Trigraphs bool
	// NoLineComments turns off '//' comments (C89 and iso9899:199409); clang then still lexes
	// "//" as a comment unless a '*' follows it.
	NoLineComments bool
	// NoDigraphs turns off <% %> <: :> %: (C89).
	NoDigraphs bool
	// NoUTFLiterals turns off the u, U and u8 encoding prefixes (C before C11, C++ before
	// C++11), and with them uR, UR and u8R raw strings.
	NoUTFLiterals bool
}

// standard is one -std= value: its language, year (C: 1989, 1994, 1999, 2011, 2017, 2023,
// 2029 for c2y; C++: 1998, 2011, 2014, 2017, 2020, 2023, 2026) and whether it is a GNU mode.
type standard struct {
	cxx  bool
	year int
	gnu  bool
}

// standards are clang 19's -std= names and aliases (clang/Basic/LangStandards.def).
var standards = func() map[string]standard {
	m := map[string]standard{"iso9899:199409": {year: 1994}}
	add := func(cxx bool, year int, names ...string) {
		for _, n := range names {
			m[n] = standard{cxx: cxx, year: year, gnu: strings.HasPrefix(n, "gnu")}
		}
	}
	add(false, 1989, "c89", "c90", "iso9899:1990", "gnu89", "gnu90")
	add(false, 1999, "c99", "iso9899:1999", "c9x", "iso9899:199x", "gnu99", "gnu9x")
	add(false, 2011, "c11", "iso9899:2011", "c1x", "iso9899:201x", "gnu11", "gnu1x")
	add(false, 2017, "c17", "iso9899:2017", "c18", "iso9899:2018", "gnu17", "gnu18")
	add(false, 2023, "c23", "c2x", "gnu23", "gnu2x")
	add(false, 2029, "c2y", "gnu2y")
	add(true, 1998, "c++98", "c++03", "gnu++98", "gnu++03")
	add(true, 2011, "c++11", "c++0x", "gnu++11", "gnu++0x")
	add(true, 2014, "c++14", "c++1y", "gnu++14", "gnu++1y")
	add(true, 2017, "c++17", "c++1z", "gnu++17", "gnu++1z")
	add(true, 2020, "c++20", "c++2a", "gnu++20", "gnu++2a")
	add(true, 2023, "c++23", "c++2b", "gnu++23", "gnu++2b")
	add(true, 2026, "c++2c", "c++26", "gnu++2c", "gnu++26")
	return m
}()

// cLanguage reports whether a -x language is C-based (C, Objective-C, their headers and
// preprocessed forms) rather than C++-based.
func cLanguage(lang string) bool {
	return !strings.Contains(lang, "++") && lang != "cuda" && lang != "hip"
}

// OptionsForFlags derives Options from clang flags and a file name the way clang's driver
// picks them: the language from the last -x (-xL, --language L, --language=L), else the
// extension as the checker passes it (.c is C, anything else C++); the standard from the last
// -std=, --std=, --std or -ansi (a standard of the other language is an error in clang and
// leaves the default: gnu17 for C, gnu++17 for C++); trigraphs from the standard (on in the
// ISO modes before C++17) unless the last of -trigraphs, -ftrigraphs and -fno-trigraphs says
// otherwise; raw strings from the standard unless -f[no-]raw-string-literals says otherwise
// (clang ignores those from C++11 on); digraphs from the standard unless -f[no-]digraphs.
func OptionsForFlags(flags []string, filename string) Options {
	isC := strings.HasSuffix(filename, ".c")
	std, ansi := "", false
	trigraphs, raw, digraphs := 0, 0, 0 // 0: the standard decides; 1: on; -1: off
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		next := func() string {
			if i+1 < len(flags) {
				i++
				return flags[i]
			}
			return ""
		}
		switch {
		case f == "-x" || f == "--language":
			isC = cLanguage(next())
		case strings.HasPrefix(f, "--language="):
			isC = cLanguage(f[len("--language="):])
		case strings.HasPrefix(f, "-x"):
			isC = cLanguage(f[2:])
		case f == "--std":
			std, ansi = next(), false
		case strings.HasPrefix(f, "-std=") || strings.HasPrefix(f, "--std="):
			std, ansi = f[strings.IndexByte(f, '=')+1:], false
		case f == "-ansi" || f == "--ansi":
			std, ansi = "", true
		case f == "-trigraphs" || f == "--trigraphs" || f == "-ftrigraphs":
			trigraphs = 1
		case f == "-fno-trigraphs":
			trigraphs = -1
		case f == "-fraw-string-literals":
			raw = 1
		case f == "-fno-raw-string-literals":
			raw = -1
		case f == "-fdigraphs":
			digraphs = 1
		case f == "-fno-digraphs":
			digraphs = -1
		}
	}
	st, ok := standards[std]
	switch {
	case ansi && isC:
		st = standards["c89"]
	case ansi:
		st = standards["c++98"]
	case !ok || st.cxx == isC:
		st = standard{cxx: !isC, year: 2017, gnu: true}
	}
	var o Options
	if isC {
		o = Options{
			NoRawStrings:      !(st.gnu && st.year >= 1999),
			NoDigitSeparators: st.year < 2023,
			NoLineComments:    st.year < 1999 && !st.gnu,
			NoDigraphs:        st.year == 1989 && !st.gnu,
			NoUTFLiterals:     st.year < 2011,
		}
	} else {
		o = Options{NoRawStrings: st.year < 2011, NoDigitSeparators: st.year < 2014, NoUTFLiterals: st.year < 2011}
	}
	o.Trigraphs = !st.gnu && (isC || st.year < 2017)
	if trigraphs != 0 {
		o.Trigraphs = trigraphs > 0
	}
	if raw != 0 && (isC || st.year < 2011) {
		o.NoRawStrings = raw < 0
	}
	if digraphs != 0 {
		o.NoDigraphs = digraphs < 0
	}
	return o
}
