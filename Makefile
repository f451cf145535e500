# labrun's build, test and cluster targets. `make test` is the full suite
# that CI runs (.ci/run); `make lab` solves the cca-datapath lab on the
# local test cluster.

GO        ?= go
BIN       := bin/labrun
PKGS      := ./...
FUZZTIME  ?= 5s

.PHONY: all build test unit lint fuzz bench testbed-up testbed-down testbed-status clean schema

all: build

build:
	$(GO) build -o $(BIN) ./cmd/labrun

# The full suite: formatting, vet, unit and CLI tests, and a short run of
# every fuzz target so they cannot rot.
test: lint unit fuzz

unit:
	$(GO) test -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fuzz:
	$(GO) test -run XXX -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./playbook
	$(GO) test -run XXX -fuzz '^FuzzSplitTemplate$$' -fuzztime $(FUZZTIME) ./eval
	$(GO) test -run XXX -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME) ./runner

bench:
	$(GO) test -run XXX -bench . -benchtime 1x ./runner

schema:
	$(GO) test ./playbookschema -update

testbed-up:
	testbed/up

testbed-down:
	testbed/down

testbed-status:
	testbed/status

clean:
	rm -rf bin
