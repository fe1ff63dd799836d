package compiledb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Why an option was dropped. Every kind but Input, Own and Link is reported to the user once.
const (
	WhyInput   = "an input file"                                                       // the compiled file itself, or another
	WhyOwn     = "the compile's own output"                                            // -c, -S, -E, -o FILE: in every command, never told
	WhyOutput  = "writes a file (output, dependency, diagnostics or trace file)"       // -MD, -MF, --serialize-diagnostics, -ftime-trace…
	WhyLoad    = "loads code or runs a program (plugin, pass-through, config, prefix)" // -fplugin, -Xclang, -mllvm, --config, -B…
	WhyLink    = "only for linking or assembling"                                      // -l, -L, -Wl,…, -shared
	WhyUnknown = "not an option Hydra knows to be safe for checking"                   // anything else
	WhyRespOut = "a response file outside the project"                                 // @file beyond the database's directory
)

// Dropped is an option left out of the flags, and why.
type Dropped struct {
	Arg string // the option as written, with its value when it takes one
	Why string // one of the Why constants
}

// separate lists the options that take their value as the next argument (and, for most, also
// joined: -Ifoo). Anything Sanitize keeps or drops with a value is here, so that a value is
// never mistaken for an option or an input.
var separate = map[string]bool{
	"-o": true, "-MF": true, "-MT": true, "-MQ": true, "-MJ": true,
	"-I": true, "-iquote": true, "-isystem": true, "-idirafter": true, "-iprefix": true,
	"-iwithprefix": true, "-iwithprefixbefore": true, "-isystem-after": true, "-include": true,
	"-imacros": true, "-x": true, "-target": true, "-Xclang": true, "-mllvm": true,
	"-Xlinker": true, "-Xassembler": true, "-Xpreprocessor": true, "-Xanalyzer": true,
	"-B": true, "--config": true, "-isysroot": true, "--sysroot": true, "-ivfsoverlay": true,
	"-arch": true, "-D": true, "-U": true, "--serialize-diagnostics": true, "-include-pch": true,
	"-T": true, "-u": true, "-e": true, "-L": true, "-l": true, "-working-directory": true,
	"-resource-dir": true, "-z": true, "-A": true, "-dependency-file": true,
	"-header-include-file": true, "-dependency-dot": true, "-Xopenmp-target": true,
	"--gcc-toolchain": true, "--std": true, "-stats-file": true, "-main-file-name": true, "-load": true,
	"-plugin": true, "-add-plugin": true, "-module-dependency-dir": true,
}

// keptPrefixes are the option families that only change how code is parsed: macros, include
// paths, language and standard, warnings, language features, target. An option is kept when it
// starts with one of them and is not dropped by an earlier rule.
var keptPrefixes = []string{
	"-D", "-U", "-I", "-iquote", "-isystem", "-idirafter", "-iprefix", "-iwithprefix",
	"-include", "-imacros", "-isysroot", "--sysroot", "-ivfsoverlay", "-nostdinc", "-nostdlibinc",
	"-nobuiltininc", "-std=", "--std", "-ansi", "-x", "-W", "-w", "-pedantic", "--pedantic",
	"-f", "-m", "--target=", "-target", "-O", "-g", "-trigraphs", "-no-canonical-prefixes",
	"-pthread", "-stdlib=", "--gcc-toolchain=", "--gcc-install-dir=", "-arch", "-A", "-C", "-CC",
	"-P", "-undef", "-ffreestanding", "-fno-", "-working-directory", "-resource-dir",
	"--rtlib=", "-rtlib=", "-faligned", "-mno-", "-march=", "-mtune=", "-mcpu=",
}

// droppedPrefixes are checked before keptPrefixes: options of the kept families that write a
// file, load code or read a file that steers the compiler (profiles, ignore lists, precompiled
// ASTs and modules, which Clang deserializes), or hand arguments to another tool.
var droppedPrefixes = []struct{ prefix, why string }{
	// -W pass-through to the preprocessor, linker and assembler (-Wp,-MD,file writes).
	{"-Wp,", WhyOutput}, {"-Wl,", WhyLink}, {"-Wa,", WhyLink},
	// -f options that write files.
	{"-ftime-trace", WhyOutput}, {"-fproc-stat-report", WhyOutput}, {"-fcrash-diagnostics", WhyOutput},
	{"-fmodules-cache-path", WhyOutput}, {"-fsave-optimization-record", WhyOutput},
	{"-foptimization-record", WhyOutput}, {"-fstack-usage", WhyOutput}, {"-fdump-", WhyOutput},
	{"-fcallgraph-info", WhyOutput}, {"-fprofile-", WhyLoad}, {"-fno-profile-", WhyLoad},
	{"-fcoverage-", WhyLoad}, {"-fcs-profile", WhyLoad}, {"-fauto-profile", WhyLoad},
	{"-fmodule", WhyLoad}, {"-fno-module", WhyLoad}, {"-fprebuilt-module", WhyLoad},
	{"-fimplicit-module", WhyLoad}, {"-fno-implicit-module", WhyLoad}, {"-fbuild-session", WhyLoad},
	{"-fplugin", WhyLoad}, {"-fpass-plugin", WhyLoad}, {"-fsanitize-ignorelist", WhyLoad},
	{"-fsanitize-blacklist", WhyLoad}, {"-fsanitize-coverage-allowlist", WhyLoad},
	{"-fsanitize-coverage-ignorelist", WhyLoad}, {"-fsanitize-system-ignorelist", WhyLoad},
	{"-fxray-attr-list", WhyLoad}, {"-fxray-always-instrument", WhyLoad}, {"-fxray-never-instrument", WhyLoad},
	{"-fembed-offload-object", WhyLoad}, {"-fopenmp-host-ir-file-path", WhyLoad},
	{"-fno-integrated-cc1", WhyLoad}, {"-fuse-ld", WhyLink}, {"-fdepfile-entry", WhyOutput},
	// -m options that are not the target's.
	{"-mllvm", WhyLoad},
	// Precompiled headers: a serialized AST that Clang loads.
	{"-include-pch", WhyLoad},
}

// exactDropped are whole options (no value) that are dropped.
var exactDropped = map[string]string{
	"-c": WhyOwn, "-S": WhyOwn, "-E": WhyOwn, "-fsyntax-only": WhyOwn,
	"-M": WhyOutput, "-MM": WhyOutput, "-MD": WhyOutput, "-MMD": WhyOutput, "-MG": WhyOutput,
	"-MP": WhyOutput, "-MV": WhyOutput, "-H": WhyOutput, "-v": WhyOutput, "-###": WhyOutput,
	"--coverage": WhyLoad, "-ftest-coverage": WhyLoad, "-fmodules": WhyLoad, "-fcxx-modules": WhyLoad,
	"-shared": WhyLink, "-static": WhyLink, "-static-libgcc": WhyLink, "-static-libstdc++": WhyLink,
	"-rdynamic": WhyLink, "-s": WhyLink, "-pie": WhyLink, "-no-pie": WhyLink, "-nostdlib": WhyLink,
	"-nostartfiles": WhyLink, "-nodefaultlibs": WhyLink, "-pipe": WhyLink, "--no-default-config": WhyLoad,
	"-emit-llvm": WhyOutput, "-emit-ast": WhyOutput, "-emit-module": WhyOutput, "-emit-pch": WhyOutput,
}

// Sanitize keeps the options in args (a compiler's arguments without the compiler) that only
// change how the code is parsed, and drops every other one: inputs, every spelling of output,
// dependency, diagnostics-file and trace options (-o, -MD, -MF, -MJ, -Wp,-MD,FILE,
// --serialize-diagnostics, -ftime-trace), everything that loads code or runs a program
// (-fplugin, -fpass-plugin, -Xclang, -mllvm, --config, -B), link-only options, and options it
// does not know. Relative paths of include options are made absolute against dir. A response
// file (@FILE) is expanded when it lies inside root (the project: the database's directory) and
// dropped otherwise. clangd's CommandMangler and disableUnsupportedOptions strip part of this;
// Hydra keeps an allowlist instead, so that an option nobody thought of is dropped, not passed.
func Sanitize(args []string, dir, root string) (kept []string, dropped []Dropped) {
	s := sanitizer{dir: dir, root: root}
	s.run(args, 0)
	return absolutize(s.kept, dir), s.dropped
}

type sanitizer struct {
	dir, root string
	kept      []string
	dropped   []Dropped
}

// maxResponseDepth bounds response files that name response files.
const maxResponseDepth = 4

func (s *sanitizer) drop(arg, why string) { s.dropped = append(s.dropped, Dropped{Arg: arg, Why: why}) }

func (s *sanitizer) run(args []string, depth int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		// The value of a separate option, for the option and its value together.
		value := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "--":
			// The rest are inputs.
			for _, in := range args[i+1:] {
				s.drop(in, WhyInput)
			}
			return
		case strings.HasPrefix(a, "@"):
			s.response(a, depth)
		case a == "" || a == "-" || !strings.HasPrefix(a, "-"):
			s.drop(a, WhyInput)
		case separate[a]:
			v, ok := value()
			joined := a + " " + v
			if why := dropWhy(a); why != "" || !ok {
				if !ok {
					why = WhyUnknown // an option missing its value
				}
				s.drop(strings.TrimSpace(joined), why)
				continue
			}
			if a == "-Xpreprocessor" || a == "-Xclang" {
				s.drop(joined, WhyLoad)
				continue
			}
			s.kept = append(s.kept, a, v)
		default:
			if why := dropWhy(a); why != "" {
				s.drop(a, why)
				continue
			}
			s.kept = append(s.kept, a)
		}
	}
}

// dropWhy says why option a (without a separate value) is dropped, or "" to keep it.
func dropWhy(a string) string {
	if why, ok := exactDropped[a]; ok {
		return why
	}
	switch {
	case a == "-o" || strings.HasPrefix(a, "-o"):
		return WhyOwn
	// Joined forms of the dependency options: -MFfile, -MTt, -MQt, -MJfile.
	case strings.HasPrefix(a, "-MF"), strings.HasPrefix(a, "-MT"),
		strings.HasPrefix(a, "-MQ"), strings.HasPrefix(a, "-MJ"), strings.HasPrefix(a, "--serialize-diagnostics"),
		strings.HasPrefix(a, "-save-temps"), strings.HasPrefix(a, "--save-temps"), strings.HasPrefix(a, "-gen-reproducer"),
		strings.HasPrefix(a, "-print-"), strings.HasPrefix(a, "--print-"), strings.HasPrefix(a, "-dependency-"),
		strings.HasPrefix(a, "-header-include"), strings.HasPrefix(a, "-stats-file"), strings.HasPrefix(a, "-module-dependency-dir"):
		return WhyOutput
	case strings.HasPrefix(a, "-Xclang"), strings.HasPrefix(a, "-Xpreprocessor"), strings.HasPrefix(a, "-Xanalyzer"),
		strings.HasPrefix(a, "-Xarch"), strings.HasPrefix(a, "-Xcuda"), strings.HasPrefix(a, "-Xopenmp"),
		strings.HasPrefix(a, "-Xoffload"), strings.HasPrefix(a, "-B"), strings.HasPrefix(a, "--prefix"),
		strings.HasPrefix(a, "--config"), strings.HasPrefix(a, "-ccc-"), strings.HasPrefix(a, "--driver-mode"),
		strings.HasPrefix(a, "-load"), strings.HasPrefix(a, "-plugin"), strings.HasPrefix(a, "-add-plugin"),
		strings.HasPrefix(a, "-main-file-name"), strings.HasPrefix(a, "-cc1"), strings.HasPrefix(a, "-fintegrated-objemitter"):
		return WhyLoad
	case a == "-undef":
		return "" // the preprocessor's "predefine nothing", not the linker's -u
	case strings.HasPrefix(a, "-l"), strings.HasPrefix(a, "-L"), strings.HasPrefix(a, "-Xlinker"), strings.HasPrefix(a, "-Xassembler"),
		strings.HasPrefix(a, "-T"), strings.HasPrefix(a, "-u"), strings.HasPrefix(a, "-e"), strings.HasPrefix(a, "-z"),
		strings.HasPrefix(a, "-static-"), strings.HasPrefix(a, "-Wl,"), strings.HasPrefix(a, "-Wa,"):
		return WhyLink
	}
	for _, d := range droppedPrefixes {
		if strings.HasPrefix(a, d.prefix) {
			return d.why
		}
	}
	for _, k := range keptPrefixes {
		if strings.HasPrefix(a, k) {
			return ""
		}
	}
	return WhyUnknown
}

// response expands a response file (@FILE) that lies inside the project, and drops it
// otherwise. Its contents are sanitized like the rest; paths in it are relative to the
// database's directory, as for the rest of the command (GCC and Clang read them so).
func (s *sanitizer) response(a string, depth int) {
	name := a[1:]
	if !filepath.IsAbs(name) {
		name = filepath.Join(s.dir, name)
	}
	if depth >= maxResponseDepth || s.root == "" || !within(name, s.root) {
		s.drop(a, WhyRespOut)
		return
	}
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxResponseFile {
		s.drop(a, WhyRespOut)
		return
	}
	data, err := os.ReadFile(name)
	if err != nil {
		s.drop(a, WhyRespOut)
		return
	}
	s.run(SplitCommand(string(data)), depth+1)
}

// maxResponseFile bounds what a response file may hold.
const maxResponseFile = 1 << 20

// within says whether path, with symlinks resolved, lies under root (also resolved).
func within(path, root string) bool {
	rp, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(rr, rp)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Report is the one message that tells the user what was dropped from the flags of source (a
// database's path), grouped by why; "" when nothing worth telling was dropped (inputs, the
// compile's own -c and -o, and link-only options are in every command and never worth a message).
func Report(source string, dropped []Dropped) string {
	byWhy := map[string][]string{}
	var order []string
	seen := map[string]bool{}
	for _, d := range dropped {
		if d.Why == WhyInput || d.Why == WhyOwn || d.Why == WhyLink || seen[d.Why+"\x00"+d.Arg] {
			continue
		}
		seen[d.Why+"\x00"+d.Arg] = true
		if byWhy[d.Why] == nil {
			order = append(order, d.Why)
		}
		byWhy[d.Why] = append(byWhy[d.Why], d.Arg)
	}
	if len(order) == 0 {
		return ""
	}
	var parts []string
	for _, why := range order {
		parts = append(parts, fmt.Sprintf("%s: %s", why, strings.Join(byWhy[why], " ")))
	}
	name := source
	if name == "" {
		name = "the flags"
	}
	return fmt.Sprintf("%s: options left out of checking; %s", name, strings.Join(parts, "; "))
}
