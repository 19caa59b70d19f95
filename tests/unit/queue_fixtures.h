/* The fixture the waiting room's unit tests share (test_queue.c, test_prequeue.c): a core, its
 * sink, the event "e1" whose room each test sets, and a counter for tickets' ids. */
#ifndef HF_TEST_QUEUE_FIXTURES_H
#define HF_TEST_QUEUE_FIXTURES_H

#include <stdlib.h>

#include "core_fixtures.h"

typedef struct fixture {
    hf_core_t *core;
    fx_sink_t sink;
    fx_event_t event;
    int next_id;
} fixture_t;

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    f->core = fx_core_create(&f->sink, 1024);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    fx_core_destroy(f->core, &f->sink);
    free(f);
    return 0;
}

#endif
