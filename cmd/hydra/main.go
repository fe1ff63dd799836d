// Command hydra is Hydra LSP's command-line front end: a thin main over the project's packages.
// Each subcommand lives in a file of its own (check.go, generate.go, bench.go, lsp.go,
// sim_server.go) and registers itself in commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
)

// command is one subcommand: run gets the arguments after the subcommand's name and returns the
// process exit status (0 accepted/ok, 1 rejected, 2 usage or infrastructure error).
type command struct {
	summary string
	run     func(args []string) int
}

// commands is filled by the init functions of the subcommand files.
var commands = map[string]command{}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	if os.Args[1] == "--version" || os.Args[1] == "-version" {
		printVersion(os.Stdout)
		return
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "hydra: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	os.Exit(cmd.run(os.Args[2:]))
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: hydra COMMAND [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-11s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'hydra COMMAND -h' for a command's flags.")
}

// parseFlags parses a subcommand's flags. When ok is false the command ends at once with status
// code: 0 after -h (the usage was printed), 2 after a bad flag (the flag package printed the error
// and the usage).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}
