# `make screenshots` WRITES INTO docs/: it runs the browser tests (tests/browser/) against a
# fresh server and copies the pictures they take under $(BUILD)/ over the ones the docs show:
#
#   $(BUILD)/seatmap.png       -> docs/seatmap.png        (seatmap.test.mjs: the seat map)
#   $(BUILD)/waiting-room.png  -> docs/waiting-room.png   (waitingroom.test.mjs: the waiting card)
#   $(BUILD)/calendar.png      -> docs/calendar.png       (calendar.test.mjs: a night calendar)
#
# Run it when the page's look changes, and commit the pictures. `make test` runs the same
# tests but never writes into docs/: the tests themselves write under $(BUILD)/ only, and only
# this target copies. Included by the Makefile, which defines BUILD, BROWSER_MODULES and
# TEST_DEPS_STAMP.

.PHONY: screenshots

DOCS_SCREENSHOTS := seatmap.png waiting-room.png calendar.png

screenshots: $(BUILD)/holdfast $(BROWSER_MODULES) | $(TEST_DEPS_STAMP)
	@rm -f $(addprefix $(BUILD)/,$(DOCS_SCREENSHOTS))
	HOLDFAST_BINARY=$(BUILD)/holdfast HOLDFAST_SCREENSHOT=$(BUILD)/seatmap.png \
	    node --test tests/browser/seatmap.test.mjs tests/browser/waitingroom.test.mjs \
	    tests/browser/calendar.test.mjs
	@for f in $(DOCS_SCREENSHOTS); do \
	    test -s $(BUILD)/$$f || { echo "screenshots: $(BUILD)/$$f was not written" >&2; exit 1; }; \
	    cp $(BUILD)/$$f docs/$$f && echo "docs/$$f <- $(BUILD)/$$f"; \
	done
