# The two commands of the README: `make run` and `make test`.
export PATH := /opt/swift/usr/bin:$(PATH)
CONFIG ?= conf/countersign.json5

.PHONY: run test build release deps test-deps unit interop limbo bench instructions clean

run: release
	.build/release/countersign run -c $(CONFIG)

test: deps test-deps
	swift build --build-tests
	swift test --skip-build
	python3 Tests/limbo/run.py
	COUNTERSIGN_BIN=$(CURDIR)/.build/debug/countersign python3 -m pytest -q Tests/interop
	$(MAKE) fuzz-regress soak-quick

build: deps
	swift build

release: deps
	swift build -c release

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-test-deps.sh

unit: deps
	swift test

interop: build test-deps
	COUNTERSIGN_BIN=$(CURDIR)/.build/debug/countersign python3 -m pytest -q Tests/interop

# x509-limbo through the trust policy; fails on a difference not in Tests/limbo/expected-failures.json.
limbo: build
	python3 Tests/limbo/run.py

bench: release
	bench/run.sh

# Instructions per request under callgrind (bench/instructions.sh): steady on a busy machine.
instructions: release
	bench/instructions.sh

.PHONY: soak soak-quick fuzz fuzz-regress

# A million requests through a release build with faults injected (bench/soak.sh); not in `make test`.
soak: release test-deps
	bench/soak.sh

# The same mix for 2000 requests on the debug build (a few seconds): part of `make test`.
soak-quick: test-deps
	SOAK_REQUESTS=2000 SOAK_HUP_SECONDS=1 COUNTERSIGN_BIN=$(CURDIR)/.build/debug/countersign bench/soak.sh

# libFuzzer: each target FUZZ_SECONDS long (fuzz/run.sh); findings go to fuzz/.build/corpus/TARGET.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS = $(shell fuzz/run.sh list)
fuzz:
	for target in $(FUZZ_TARGETS); do fuzz/run.sh $$target $(FUZZ_SECONDS) || exit 1; done

# Each target over its committed corpus once (no mutation): a crash, leak or hang fails.
fuzz-regress:
	@mkdir -p fuzz/.build
	@for target in $(FUZZ_TARGETS); do \
	    if fuzz/run.sh $$target regress > fuzz/.build/$$target.regress.log 2>&1; then \
	        echo "fuzz-regress $$target: $$(ls fuzz/corpus/$$target | wc -l) inputs, no crash"; \
	    else cat fuzz/.build/$$target.regress.log; echo "fuzz-regress $$target FAILED"; exit 1; fi; done

clean:
	rm -rf .build

# Installation. BIN picks the binary to install (default: the release build, built first).
.PHONY: install deb image static-release
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/countersign
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
DOCDIR ?= $(PREFIX)/share/doc/countersign
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
INSTALL_BIN = $(or $(BIN),.build/release/countersign)

# The configuration is installed only when none is there: an upgrade never overwrites it.
install: $(if $(BIN),,release)
	install -D -m 0755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/countersign
	install -D -m 0644 deploy/man/countersign.1 $(DESTDIR)$(MANDIR)/man1/countersign.1
	install -D -m 0644 docs/countersign.schema.json $(DESTDIR)$(DATADIR)/countersign.schema.json
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 docs/*.md docs/countersign.schema.json $(DESTDIR)$(DOCDIR)/docs/
	install -D -m 0644 deploy/debian/copyright $(DESTDIR)$(DOCDIR)/copyright
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(INSTALL_BIN) completion bash > $(DESTDIR)$(BASHCOMPDIR)/countersign
	$(INSTALL_BIN) completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_countersign
	$(INSTALL_BIN) completion fish > $(DESTDIR)$(FISHCOMPDIR)/countersign.fish
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/countersign $(DESTDIR)$(ZSHCOMPDIR)/_countersign $(DESTDIR)$(FISHCOMPDIR)/countersign.fish
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/countersign
	sed -e 's|/usr/bin/countersign|$(BINDIR)/countersign|' -e 's|/etc/countersign|$(SYSCONFDIR)/countersign|g' \
		deploy/systemd/countersign.service > $(DESTDIR)$(UNITDIR)/countersign.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/countersign.service
	test -e $(DESTDIR)$(SYSCONFDIR)/countersign/countersign.json5 || \
		install -m 0644 deploy/countersign.json5 $(DESTDIR)$(SYSCONFDIR)/countersign/countersign.json5

# A Debian package (.build/deb/countersign_VERSION_ARCH.deb). By default from a release
# build that links the Swift runtime statically, so the package runs without the toolchain;
# BIN=.build/debug/countersign packages another binary (the test does, to stay quick).
deb: $(if $(BIN),,static-release)
	scripts/build-deb.sh $(or $(BIN),.build/static/release/countersign)

# An OCI image archive (.build/image/countersign-VERSION-oci.tar) written by our own script,
# without a registry or a container daemon; BIN=... packages another binary (the test does).
# The Dockerfile builds the same image where a daemon exists.
image: $(if $(BIN),,static-release)
	scripts/build-image.py $(or $(BIN),.build/static/release/countersign)

static-release: deps
	swift build -c release --static-swift-stdlib --scratch-path .build/static
