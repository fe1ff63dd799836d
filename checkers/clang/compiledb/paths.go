package compiledb

import (
	"path/filepath"
	"strings"
)

// pathFlags take a path, joined (-Ifoo, --sysroot=/x) or as the next argument (-I foo). A joined
// form with "=" comes before its bare name, so that "--sysroot=/x" is not read as "--sysroot"
// joined to "=/x".
var pathFlags = []string{
	"--include-directory=", "--sysroot=", "-resource-dir=",
	"-I", "-iquote", "-isystem-after", "-isystem", "-idirafter", "-include", "-imacros",
	"-isysroot", "--sysroot", "-ivfsoverlay", "-resource-dir", "-iprefix",
}

// absolutize makes the paths of include options absolute against dir.
func absolutize(args []string, dir string) []string {
	out := make([]string, 0, len(args))
	fix := func(p string) string {
		if p == "" || filepath.IsAbs(p) || dir == "" {
			return p
		}
		return filepath.Join(dir, p)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		matched := false
		for _, f := range pathFlags {
			if a == f && !strings.HasSuffix(f, "=") && i+1 < len(args) {
				out = append(out, a, fix(args[i+1]))
				i++
				matched = true
				break
			}
			if strings.HasPrefix(a, f) && len(a) > len(f) {
				out = append(out, f+fix(a[len(f):]))
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, a)
		}
	}
	return out
}

// SplitCommand splits a shell command line as compile_commands.json's "command" and response
// files hold it: quotes and backslashes, no expansions.
func SplitCommand(s string) []string {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc = true
			inArg = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
			inArg = true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
