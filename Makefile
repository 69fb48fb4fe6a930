# The two commands of the README: `make run` and `make test`.
export PATH := /opt/swift/usr/bin:$(PATH)
CONFIG ?= conf/countersign.json5

.PHONY: run test build release deps test-deps unit interop limbo bench clean

run: release
	.build/release/countersign run -c $(CONFIG)

test: deps test-deps
	swift build --build-tests
	swift test --skip-build
	python3 Tests/limbo/run.py
	COUNTERSIGN_BIN=$(CURDIR)/.build/debug/countersign python3 -m pytest -q Tests/interop

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

clean:
	rm -rf .build
