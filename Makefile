# Hydra LSP build. `make run` installs what is missing, builds everything and runs the main job on
# an example; `make test` runs the whole test suite. See README.md.
SHELL := /bin/bash
LLVM_CONFIG ?= llvm-config-19
GO ?= go
BIN := bin
# VERSION is what `hydra --version`, `hydra doctor` and the language server's serverInfo report:
# the file VERSION's release, with the commit after a "+" unless this is the release's tag
# (scripts/version.sh).
VERSION ?= $(shell ./scripts/version.sh 2>/dev/null || echo dev)

SHIM_SRC := $(wildcard checkers/clang/shim/*.cpp) $(wildcard checkers/clang/shim/*.h)

.PHONY: all deps build shim hydra run dist vsix test test-deps test-go test-fuzz test-editors lint clean

all: build

# deps installs the Debian packages the build needs, when they are missing.
deps:
	@./scripts/install-deps.sh build

build: shim hydra

shim: $(BIN)/hydra-clang-shim

$(BIN)/hydra-clang-shim: $(SHIM_SRC) checkers/clang/shim/Makefile
	@mkdir -p $(BIN)
	$(MAKE) -C checkers/clang/shim LLVM_CONFIG=$(LLVM_CONFIG) OUT=$(abspath $(BIN))/hydra-clang-shim

hydra:
	@mkdir -p $(BIN)
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN)/hydra ./cmd/hydra

clean:
	rm -rf $(BIN) dist

# dist: the release archive dist/hydra-<version>-linux-<arch>.tar.gz (static hydra and shim, Clang's
# builtin headers, editor clients, INSTALL), then a check of it without the LLVM installation
# (scripts/dist.sh; needs libzstd-dev besides the build's packages, and root for the full check).
dist:
	@LLVM_CONFIG=$(LLVM_CONFIG) GO=$(GO) ./scripts/dist.sh

# vsix: the platform VSIX dist/hydra-lsp-<version>-linux-x64.vsix, the VS Code extension with the
# release archive's server inside (scripts/vsix.sh; needs what dist needs, and `npm ci` in
# vscode-extension).
vsix:
	@LLVM_CONFIG=$(LLVM_CONFIG) GO=$(GO) ./scripts/vsix.sh

# run: the main job on an example — install what is missing, build, then generate a program with the
# simulated model (a stand-in for a real one) while the real Clang checker repairs its errors.
run: deps build
	@./scripts/demo.sh

# test: the whole test suite (what .ci/run calls): after lint, the Go tests and the editor tests
# run side by side, then the release archive's test (scripts/test-suite.sh says why).
test: test-deps build lint
	@./scripts/test-suite.sh

test-deps:
	@./scripts/install-deps.sh test

lint:
	@echo "== gofmt / go vet / staticcheck"
	@test -z "$$(gofmt -l $$(git ls-files '*.go') | tee /dev/stderr)" || { echo "gofmt: files above need formatting"; exit 1; }
	@echo "== go mod tidy -diff"
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# The timeout is a hang guard, not a time budget: checkers/agreement alone (1,422 whole-file clang
# runs) took over 20 minutes on a 2-core machine shared with other work.
test-go:
	@echo "== go test"
	$(GO) test -count=1 -timeout 40m $(GO_TEST_FLAGS) ./...
	@echo "== go test -race -short ./engine/... (cgo for the race detector: clang-19 unless CC is set)"
	CC=$${CC:-clang-19} $(GO) test -count=1 -race -short -timeout 15m ./engine/...

# test-fuzz: the chunked checker against whole-file clang on fuzzed chunk sequences, for a bounded
# number of inputs (checkers/clang/fuzz_test.go); a failure leaves its input under
# checkers/clang/testdata/fuzz/, where `go test` replays it from then on. The bound is a count,
# not a duration: with -fuzztime=60s, Go 1.26's fuzzing coordinator may fail the run with a bare
# "context deadline exceeded" when the time runs out (golang/go#75804, fixed in Go 1.27); it did
# so on a loaded machine, where one input takes up to seconds.
test-fuzz:
	@echo "== go test -fuzz (300 inputs, about a minute)"
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzChunkedAgainstWholeFile -fuzztime=300x -fuzzminimizetime=100x ./checkers/clang/

test-editors:
	@echo "== editor clients"
	@./scripts/test-editors.sh
