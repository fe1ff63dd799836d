package lsp

import "testing"

func TestDocumentRootIsTheInnermostWorkspaceFolderHoldingIt(t *testing.T) {
	p := InitializeParams{
		RootURI: "file:///work/repo",
		WorkspaceFolders: []WorkspaceFolder{
			{URI: "file:///work/repo/sub", Name: "sub"},
			{URI: "untitled:x", Name: "not a directory"},
		},
	}
	s := &Server{roots: workspaceRoots(p)}
	if len(s.roots) != 2 {
		t.Fatalf("roots = %q, want the two file: folders", s.roots)
	}
	for _, tc := range []struct{ path, want string }{
		{"/work/repo/sub/a.cpp", "/work/repo/sub"},
		{"/work/repo/b/c.cpp", "/work/repo"},
		{"/work/repository/x.cpp", ""}, // a sibling with the same name prefix is not inside
		{"/elsewhere/y.cpp", ""},
		{"", ""},
	} {
		if got := s.rootFor(tc.path); got != tc.want {
			t.Errorf("rootFor(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
