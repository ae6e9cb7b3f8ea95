# Developer entry points; .ci/run is the full CI run (services, PHP and
# Laravel, release build, race detector, interop, stress, fuzzing).
# `make` alone runs `make test`.

# staticcheck is pinned as .ci/run pins it; installed once into bin/ (git-ignored).
STATICCHECK_VERSION := v0.7.0
STATICCHECK := bin/staticcheck-$(STATICCHECK_VERSION)/staticcheck

.PHONY: test test-short lint generate

# The README's test command: every package, the conformance suites against
# each reachable database (JOBTRIAGE_TEST_*_DSN; CI=true fails on an
# unreachable one), interop with JOBTRIAGE_INTEROP=1, stress under CI.
test:
	go test ./...

# Without the slow proofs (builds of the real binary, long races).
test-short:
	go test -short ./...

# What .ci/run checks before the tests: gofmt (third_party/ excepted),
# go vet, staticcheck.
lint: $(STATICCHECK)
	@unformatted=$$(git ls-files -z -- '*.go' ':!:third_party/' | xargs -0 gofmt -l); \
	if [ -n "$$unformatted" ]; then printf 'not gofmt-ed (run gofmt -w):\n%s\n' "$$unformatted" >&2; exit 1; fi
	go vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(dir $@) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Everything generated that is committed: the command reference and man
# pages (docs/reference/, docs/man/; TestReferenceIsCurrent checks them),
# then the go:generate lines (phpconf's ASCII table needs php: PHP 8.2 from
# testdata/laravel-app/install-deps.sh).
generate:
	go run ./internal/gendocs
	go generate ./...
