# premortem: the two commands of the README are `make demo` and `make test`.
GO ?= go
BIN := bin/premortem

.PHONY: all deps build demo test test-go fuzz e2e vet clean

all: build

deps:
	./scripts/install-deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/premortem

# Judge the demo notebook's unexecuted cells: starts a kernel, replays the executed cells,
# and prints what will crash. premortem exits 1 when it predicts a crash, as the demo does.
demo: deps build
	$(BIN) check testdata/demo/demo.ipynb; s=$$?; [ $$s -eq 0 ] || [ $$s -eq 1 ]

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

test-go:
	$(GO) test -count=1 -timeout 75m ./...

# A few seconds per fuzz target: enough to catch regressions on the seeds' neighbours.
fuzz:
	./scripts/fuzz.sh 5s

e2e: build
	./editors/vscode/test/e2e.sh

test: deps vet test-go fuzz e2e

clean:
	rm -rf bin
