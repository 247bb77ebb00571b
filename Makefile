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

.PHONY: all help build run test snapshots bench lint clean

all: build

help:
	@echo "make build      build $(BIN)"
	@echo "make run        run dsh from source (ARGS=\"...\" passes arguments)"
	@echo "make test       go vet, then every test with the race detector"
	@echo "make snapshots  regenerate golden files (GOLDEN_PKGS)"
	@echo "make bench      run the benchmarks"
	@echo "make lint       gofmt check, go vet, staticcheck when reachable"
	@echo "make clean      remove build output"

# -buildvcs=auto records the commit for `dsh version` even when GOFLAGS
# disables it.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/dsh

run:
	$(GO) run ./cmd/dsh $(ARGS)

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

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
