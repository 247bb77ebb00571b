# dsh developer targets. Everything runs with only Go installed; `make help`
# lists the targets.

GO   ?= go
BIN  ?= bin/dsh
# Arguments for `make run`, e.g. make run ARGS="config show".
ARGS ?=

# Packages with goldie golden files, which `make snapshots` regenerates. By
# default every package whose tests link goldie; extend it with
# GOLDEN_PKGS += ./some/pkg below, or override it on the command line.
GOLDEN_PKGS ?= $(shell $(GO) list -e -test -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./... 2>/dev/null \
	| awk '$$1 ~ /\.test$$/ && / github\.com\/sebdah\/goldie\/v2( |$$)/ { sub(/\.test$$/, "", $$1); print $$1 }')

# snapshots/ rewrites more than goldie files on -update (the replay scenarios'
# persisted logs and stdout transcripts), so it is always included.
GOLDEN_UPDATE = $(sort $(GOLDEN_PKGS) github.com/seed-e9b4dba4/dsh/snapshots)

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@latest

.PHONY: all help build install run test snapshots bench bench-go lint clean tui-smoke

all: build

help:
	@echo "make build      build $(BIN)"
	@echo "make install    go install dsh into \$$GOBIN (default \$$GOPATH/bin) and say where"
	@echo "make run        run dsh from source: the terminal UI, on the demo profile"
	@echo "                when DEEPSEEK_API_KEY is unset (ARGS=\"...\" passes arguments)"
	@echo "make test       go vet, then every test with the race detector"
	@echo "make snapshots  regenerate golden files (GOLDEN_PKGS)"
	@echo "make bench      the benchmark table (BENCH_PRESET=small|large|huge|tiny, BENCH_CORPUS_DIR)"
	@echo "make bench-go   every package's Go micro-benchmarks"
	@echo "make lint       gofmt check, go vet, staticcheck when reachable"
	@echo "make tui-smoke  drive the built binary's terminal UI in tmux (needs tmux)"
	@echo "make clean      remove build output"

# -buildvcs=auto records the commit for `dsh version` even when GOFLAGS
# disables it. The binary is static (cgo off): every `dsh sessions …` row is
# a new process, and a cgo binary first runs the dynamic loader and cgo's
# thread set-up (~1 ms of each start). Nothing dsh does needs cgo: the
# sandbox's all-threads Landlock call uses the Go runtime's own
# AllThreadsSyscall, names resolve with Go's resolver. BUILD_CGO=1 builds
# the cgo binary; `make test` keeps cgo, which the race detector needs.
BUILD_CGO ?= 0

build:
	CGO_ENABLED=$(BUILD_CGO) $(GO) build -buildvcs=auto -o $(BIN) ./cmd/dsh

# go install puts dsh in $GOBIN, or $GOPATH/bin when GOBIN is unset; the
# hint names the directory actually used and says when it is not on PATH.
install:
	CGO_ENABLED=$(BUILD_CGO) $(GO) install -buildvcs=auto ./cmd/dsh
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH)/bin; \
	echo "installed $$dir/dsh"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH; add it, e.g. export PATH=\"$$dir:\$$PATH\"";; esac

# Bare `make run` opens the terminal UI. Without an API key in the
# environment it uses the demo profile, which replays a recorded session, so
# a new user can try dsh with no key and no network; ARGS=tui forces the
# configured provider.
run:
	@if [ -z "$(ARGS)" ] && [ -z "$$DEEPSEEK_API_KEY" ] && [ -z "$$DSH_LLM_API_KEY" ]; then \
		echo "$(GO) run ./cmd/dsh --profile demo  (DEEPSEEK_API_KEY is unset)"; \
		$(GO) run ./cmd/dsh --profile demo; \
	else \
		$(GO) run ./cmd/dsh $(ARGS); \
	fi

test:
	$(GO) vet ./...
	$(GO) test -race ./...

# -count=1: a cached pass would skip the update.
snapshots:
	@if [ -z "$(strip $(GOLDEN_UPDATE))" ]; then \
		echo "snapshots: no package has golden files yet; nothing to update"; \
	else \
		echo "$(GO) test -count=1 $(strip $(GOLDEN_UPDATE)) -update"; \
		$(GO) test -count=1 $(GOLDEN_UPDATE) -update; \
	fi

# One table with every figure of issue 9, measured in one run
# (internal/bench/dshbench): index build, searches beside bare FTS5 and rg,
# reconciliation, session_search, ACP cold start, TUI open, peak RSS.
# BENCH_PRESET=small is a quick check (1,000 sessions); large is 10,000
# sessions, ~2M events; huge (100 sessions of 10,000-20,000 events) and
# tiny (50,000 one-turn sessions) are the other shapes of about that size.
# Set BENCH_CORPUS_DIR to keep and reuse the corpus.
# Never run in CI. One part alone (build, bare, search, reconcile, tool) as
# JSON: BENCH_ARGS="-dir DIR -part build".
BENCH_PRESET ?= large
BENCH_ARGS ?=

bench:
	$(GO) run ./internal/bench/dshbench -preset $(BENCH_PRESET) $(BENCH_ARGS)

# Every package's Go micro-benchmarks.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# A scripted run of the built binary in a real terminal: tmux provides the
# pty, send-keys types, capture-pane reads the screen (cmd/dsh, build tag
# tmux). Not part of `make test`, since it needs tmux.
tui-smoke:
	$(GO) test -tags tmux -run TestTmuxSmoke -count=1 -v ./cmd/dsh

lint:
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './bin/*' -not -path '*/testdata/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@if $(GO) run $(STATICCHECK) -version >/dev/null 2>&1; then \
		echo "$(GO) run $(STATICCHECK) ./..."; \
		$(GO) run $(STATICCHECK) ./...; \
	else \
		echo "lint: staticcheck skipped (cannot fetch $(STATICCHECK); is the Go module proxy reachable?)"; \
	fi

clean:
	rm -rf bin
