package clang

import (
	"context"
	"os"
	"slices"
	"testing"
)

// The descriptor numbers on the command line must be the places of the files in ExtraFiles
// (3 + index): a shim given the lifeline's number for its ring would map a pipe.
func TestShimProcessNumbersItsDescriptorsInOrder(t *testing.T) {
	ch, life, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	defer life.Close()
	ring, err := os.CreateTemp(t.TempDir(), "ring")
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	for _, c := range []struct {
		name  string
		p     ShimProcess
		args  []string
		files []*os.File
	}{
		{"all", ShimProcess{Channel: ch, Lifeline: life, Ring: ring, Session: 7, File: "a.cpp", Root: "/p", Flags: []string{"-x", "c++"}},
			[]string{"--channel-fd", "3", "--lifeline-fd", "4", "--ring-fd", "5", "--session", "7", "--file", "a.cpp", "--root", "/p", "--", "-x", "c++"},
			[]*os.File{ch, life, ring}},
		{"socket alone", ShimProcess{Channel: ch, Lifeline: life, Session: 1, File: "b.c"},
			[]string{"--channel-fd", "3", "--lifeline-fd", "4", "--session", "1", "--file", "b.c", "--"},
			[]*os.File{ch, life}},
		{"ring without lifeline", ShimProcess{Channel: ch, Ring: ring, Session: 2, File: "c.c", Flags: []string{"-xc"}},
			[]string{"--channel-fd", "3", "--ring-fd", "4", "--session", "2", "--file", "c.c", "--", "-xc"},
			[]*os.File{ch, ring}},
	} {
		cmd := c.p.Command(context.Background(), "/bin/shim")
		if got := cmd.Args[1:]; !slices.Equal(got, c.args) {
			t.Errorf("%s: args %q, want %q", c.name, got, c.args)
		}
		if !slices.Equal(cmd.ExtraFiles, c.files) {
			t.Errorf("%s: ExtraFiles %v, want %v", c.name, cmd.ExtraFiles, c.files)
		}
	}
}
