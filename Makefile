# labrun's build, test and cluster targets. `make test` is the full suite
# that CI runs (.ci/run); `make lab` solves the cca-datapath lab on the
# local test cluster. Both need root (the test cluster lives in network
# namespaces of this machine). `make lab LAB=NAME` solves playbooks/NAME.yaml
# instead.

GO        ?= go
BIN       := bin/labrun
PKGS      := ./...

.PHONY: all build image test unit race lint fuzz schema-lsp e2e e2e-faults e2e-single e2e-tunnel e2e-native lab bench testbed-up testbed-down testbed-status testbed-logs clean schema reference

KUBECONFIG_TESTBED := /var/lib/labrun-testbed/kubeconfig
LAB                ?= cca-datapath
LAB_OUT            ?= /tmp/labrun-$(LAB)
# The test cluster profile a lab needs, from a `# testbed-profile: NAME` line
# of its testbed vars file (a two-node lab says tunnel); without one, the
# testbed's default (single).
LAB_PROFILE        ?= $(shell sed -n 's/^\# testbed-profile: *\([a-z]*\).*/\1/p' playbooks/$(LAB).testbed.yaml 2>/dev/null)

all: build

# labrun-helm, labrun's Helm (internal/heavy/helmproc says why it is a program
# of its own), goes beside labrun, where labrun looks for it. Both are
# stamped with the commit for `labrun version`, whatever GOFLAGS says
# (this machine's hold -buildvcs=false): -buildvcs=true in a git clone;
# in a git worktree go build stamps nothing (go.dev/issue/58218), so the
# commit is given to labrun with -X too (VCS_LDFLAGS), which `labrun
# version` names when the build information has none.
VCS_LDFLAGS = -X main.vcsRevision=$(shell git rev-parse HEAD 2>/dev/null) \
	-X main.vcsTime=$(shell TZ=UTC0 git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null) \
	-X main.vcsModified=$(shell git status --porcelain >/dev/null 2>&1 && { [ -z "$$(git status --porcelain)" ] && echo false || echo true; })

build:
	$(GO) build -buildvcs=true -ldflags='$(VCS_LDFLAGS)' -o $(BIN) ./cmd/labrun
	$(GO) build -buildvcs=true -o $(BIN)-helm ./cmd/labrun-helm

# labrun's container image (cmd/labrun-image), as an OCI image-layout
# tarball that testbed/lib/labrun-image.sh imports into the test cluster's
# nodes: labrun and labrun-helm beside it (a Job grading a lab with a helm
# step starts it). Both are built static, their paths trimmed, without
# symbol tables (-s -w: 107 MB in place of 150; stack traces and the
# build information stay), with the commit stamped for `labrun version`
# and the image's tag (-buildvcs=true: this machine's GOFLAGS turn it off;
# go build stamps nothing in a git worktree, go.dev/issue/58218, so build
# the image in a clone). The tarball is rebuilt only when the bytes of its
# inputs changed (go build touches a binary even when it relinks nothing):
# the binaries, the CA bundle (Debian's ca-certificates), the builder.
# One commit gives one digest.
IMAGE        := bin/labrun-image.oci.tar
CA_BUNDLE    := /etc/ssl/certs/ca-certificates.crt
IMAGE_INPUTS  = $(BIN) $(BIN)-helm $(CA_BUNDLE) $(filter-out %_test.go,$(wildcard cmd/labrun-image/*.go)) go.sum
IMAGE_BUILD   = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=true -ldflags='-s -w'

image:
	$(IMAGE_BUILD) -o $(BIN) ./cmd/labrun
	$(IMAGE_BUILD) -o $(BIN)-helm ./cmd/labrun-helm
	@sums="$$(sha256sum $(IMAGE_INPUTS))" || exit 1; \
	if [ -f $(IMAGE) ] && [ "$$sums" = "$$(cat $(IMAGE).inputs 2>/dev/null)" ]; then \
	  echo "$(IMAGE): up to date"; \
	else \
	  echo "$(GO) run ./cmd/labrun-image -binary $(BIN) -helm $(BIN)-helm -ca-bundle $(CA_BUNDLE) -o $(IMAGE)"; \
	  $(GO) run ./cmd/labrun-image -binary $(BIN) -helm $(BIN)-helm -ca-bundle $(CA_BUNDLE) -o $(IMAGE) && echo "$$sums" >$(IMAGE).inputs; \
	fi

# The full suite: formatting, vet, unit and CLI tests, a short run of every
# fuzz target so they cannot rot, and the end-to-end tests on the testbed.
test: lint unit race fuzz schema-lsp e2e

unit:
	$(GO) test -count=1 $(PKGS)

# The packages whose code runs goroutines (parallel branches, progress,
# exec sessions, signal handling, HTTP and BPF map reads, the Helm pipe)
# once more under the race detector.
race:
	$(GO) test -race -count=1 ./runner ./internal/lang/eval ./cmd/labrun ./cmd/labrun/internal/console ./internal/heavy/kube ./actions/... ./internal/heavy/bpfmaps ./internal/heavy/helmproc ./cmd/labrun-helm

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	@files=$$(git ls-files '*.go'); [ -n "$$files" ] || { echo "lint: git lists no Go files"; exit 1; }; \
	out=$$(gofmt -l $$files); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags e2e $(PKGS)
	$(GO) vet -tags yamlls ./cmd/labrun/internal/playbookschema
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(STATICCHECK) -tags e2e $(PKGS)

# Every fuzz target of every package (found by its `func FuzzX(f
# *testing.F)` line, so a new target is fuzzed without editing this file)
# runs for a number of inputs, not a duration: when a duration runs out
# while a worker is mid-input, Go 1.26's fuzz coordinator can report its own
# deadline as a failure (go.dev/issue/75804, fixed in Go 1.27). 20,000
# inputs take a few seconds per target on a 2-core machine; FUZZSCALE multiplies
# them for a longer run (make fuzz FUZZSCALE=20). An input that fails is
# written by Go to PKG/testdata/fuzz/FuzzX/ and, once committed, runs as a
# seed in every `go test`.
FUZZSCALE ?= 1
FUZZINPUTS = $$((20000 * $(FUZZSCALE)))

fuzz:
	@n=0; for dir in $$($(GO) list -f '{{.Dir}}' $(PKGS)); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' $$dir/*_test.go 2>/dev/null); do \
	    echo "fuzz $$t ($${dir#$(CURDIR)/}, $(FUZZINPUTS) inputs)"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZINPUTS)x "$$dir" || exit 1; \
	    n=$$((n + 1)); \
	  done; \
	done; \
	[ $$n -gt 0 ] || { echo "no fuzz target found"; exit 1; }; echo "fuzzed $$n targets"

# End-to-end, on each profile of the test cluster in E2E_PROFILES, in order
# (testbed/up builds and caches it on first use, and switches profile by
# tearing the running one down): on a two-node profile the tests named
# TestTwoNode*, TestTunnel* and TestNative* (testbed/e2e, and the tcpdump
# capture across nodes in cmd/labrun), on single everything tagged e2e (client-go against
# the real API server and kubelet, the testbed's own proofs, the
# cca-datapath lab); single comes last and is left running. On failure, the
# component logs that explain it.
E2E_PROFILES := tunnel native single
TWO_NODE_TESTS := ^(TestTwoNode|TestTunnel|TestNative)

e2e: build
	@for p in $(E2E_PROFILES); do $(MAKE) --no-print-directory e2e-$$p || exit 1; done
	@$(MAKE) --no-print-directory e2e-faults

# The fault suite (cmd/labrun/faults_e2e_test.go), on whatever profile is
# running (make e2e leaves single): a lab-like playbook through a restart
# of the API server, of etcd, of node 1's kubelet and of its Cilium agent
# (each killed by the pid testbed/up recorded at a point the playbook
# signals through a FIFO, and restored by testbed/up, which starts only
# what died); an exec whose stream is cut: run again when read-only,
# never when mutating; the lab
# with every API response 2 s late, through a delaying proxy; and the
# faults that need no cluster (a second Ctrl-C, a SIGKILLed labrun,
# SIGKILL then --from then check, a failed fresh run). It runs alone, in
# one go test of one package: no other test may see the cluster's parts
# die. LABRUN_FAULTS=1 is what lets the tests kill them.
FAULT_TESTS := ^(TestFault|TestSecondInterruptLeavesNoProcess|TestKilledLabrunLeavesNoProgram|TestKilledRunResumedPassesCheck|TestFailedFreshRunLeavesNoStaleFile)

e2e-faults:
	LABRUN_FAULTS=1 LABRUN_KUBECONFIG=$(KUBECONFIG_TESTBED) $(GO) test -count=1 -tags e2e -timeout 30m -run '$(FAULT_TESTS)' -v ./cmd/labrun/ || { $(MAKE) --no-print-directory testbed-logs; exit 1; }

e2e-single:
	testbed/up --profile single
	LABRUN_KUBECONFIG=$(KUBECONFIG_TESTBED) $(GO) test -count=1 -tags e2e -timeout 30m ./internal/heavy/kube/... ./testbed/e2e/... ./cmd/... || { $(MAKE) --no-print-directory testbed-logs; exit 1; }

e2e-tunnel e2e-native: e2e-%:
	testbed/up --profile $*
	LABRUN_KUBECONFIG=$(KUBECONFIG_TESTBED) $(GO) test -count=1 -tags e2e -timeout 30m -run '$(TWO_NODE_TESTS)' -v ./testbed/e2e/ ./cmd/labrun/ || { $(MAKE) --no-print-directory testbed-logs; exit 1; }

# The main job: build labrun and the testbed (on the lab's profile), then
# solve the lab LAB (cca-datapath unless given) on it.
lab: build
	testbed/up $(if $(LAB_PROFILE),--profile $(LAB_PROFILE))
	$(BIN) run --kubeconfig $(KUBECONFIG_TESTBED) --vars playbooks/$(LAB).testbed.yaml --set out=$(LAB_OUT) playbooks/$(LAB).yaml
	@echo "lab files: $$(ls $(LAB_OUT) | tr '\n' ' ')"

testbed-logs:
	@for f in /var/lib/labrun-testbed/logs/*.log; do echo "==== $$f (last 40 lines)"; tail -n 40 "$$f"; done 2>/dev/null || true
	-testbed/status

# labrun against bash + kubectl, kubectl exec, a polling loop, grep/awk and
# cilium-dbg on the test cluster, each lab on its own profile (single, then
# tunnel, which is left running): prints a table and writes
# testbed/bench/results.json (testbed/bench/README.md). BENCH_ARGS="-n 1 -results
# testbed/bench/results.local.json" is the short run CI does so it cannot rot.
BENCH_ARGS ?=
bench:
	testbed/bench/run $(BENCH_ARGS)

schema:
	$(GO) test ./cmd/labrun/internal/playbookschema -update

# docs/reference.md and the docs table labrun types prints, from the result
# types and their doc comments.
reference:
	$(GO) test ./cmd/labrun/internal/typeref -update

# The editor schema in the language server the common YAML editor plugins
# run: yaml-language-server from the npm registry, installed once into
# YAMLLS_DIR with the machine's Node.js and npm (.ci/run makes sure they
# are there). 2.0.0 declares Node >= 22.13 but runs on the Node 20 of this
# machine's image; the test is the proof. cmd/labrun/internal/playbookschema/yamlls_test.go
# speaks LSP to it over stdio.
YAMLLS_VERSION := 2.0.0
YAMLLS_DIR     ?= /var/cache/labrun-yamlls
YAMLLS         := $(YAMLLS_DIR)/node_modules/.bin/yaml-language-server

schema-lsp:
	@grep -qs '"version": "$(YAMLLS_VERSION)"' $(YAMLLS_DIR)/node_modules/yaml-language-server/package.json || \
	  npm install --no-audit --no-fund --loglevel=error --prefix $(YAMLLS_DIR) yaml-language-server@$(YAMLLS_VERSION)
	LABRUN_YAMLLS=$(YAMLLS) $(GO) test -count=1 -tags yamlls -run TestLanguageServer -v ./cmd/labrun/internal/playbookschema

# The test cluster's profile: single (default), tunnel or native
# (testbed/README.md): make testbed-up PROFILE=tunnel.
PROFILE ?= single

testbed-up:
	testbed/up --profile $(PROFILE)

testbed-down:
	testbed/down

testbed-status:
	testbed/status

clean:
	rm -rf bin
