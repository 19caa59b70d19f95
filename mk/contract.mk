# The OpenAPI description and the contract test (tests/contract): @redocly/cli lints
# docs/openapi.yaml, and check.mjs (ajv) checks the answers the black-box suite recorded against
# it. Their npm packages are pinned in tests/contract/package-lock.json, installed as the
# browser test's are.
CONTRACT_MODULES := tests/contract/node_modules/.package-lock.json
$(CONTRACT_MODULES): tests/contract/package-lock.json | $(TEST_DEPS_STAMP)
	cd tests/contract && npm ci --no-audit --no-fund --loglevel=error

test: $(CONTRACT_MODULES)

.PHONY: openapi-lint contract-test
# The lint alone: make openapi-lint.
openapi-lint: $(CONTRACT_MODULES)
	cd tests/contract && REDOCLY_TELEMETRY=off node_modules/.bin/redocly lint \
	    --config redocly.yaml ../../docs/openapi.yaml

# The black-box suite (release) recording its exchanges, then the checker and its own tests.
contract-test: $(CONTRACT_MODULES) $(BUILD)/holdfast
	@mkdir -p $(BUILD)/contract && rm -f $(BUILD)/contract/exchanges.jsonl
	HOLDFAST_CONTRACT_RECORD=$(CURDIR)/$(BUILD)/contract/exchanges.jsonl \
	    python3 tests/blackbox/run.py --binary $(BUILD)/holdfast
	node --test tests/contract/
	node tests/contract/check.mjs $(BUILD)/contract/exchanges.jsonl
