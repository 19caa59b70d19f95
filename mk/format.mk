# The code's layout by clang-format, with the style in .clang-format (written to match the code
# as it was: 4 spaces, 100 columns, K&R braces). Debian 12's clang-format 14, from
# scripts/deps.sh --test: another version may lay a few lines out otherwise.
#
#   make format         rewrites src/ and tests/unit/ in place
#   make format-check   fails, naming the file, on any file of those that format would change
#
# format-check is part of make lint (the whole tree was formatted once, in one commit): a change
# that is not formatted fails it. FORMAT_CHECK_IN_LINT=0 leaves it out, for another version of
# clang-format that lays some lines out otherwise.

.PHONY: format format-check

CLANG_FORMAT ?= clang-format
FORMAT_CHECK_IN_LINT ?= 1
FORMAT_FILES = $(shell find src tests/unit -name '*.[ch]' | LC_ALL=C sort)

format:
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

# One error per file at most (the first change it would make), so the list stays readable.
format-check:
	@$(CLANG_FORMAT) --dry-run --Werror --ferror-limit=1 $(FORMAT_FILES)

ifeq ($(FORMAT_CHECK_IN_LINT),1)
lint: format-check
endif
