/* Unit tests of the store's table of record kinds (store/records.h): every kind of
 * core/mutation.h's list has its row with everything set, the numbers between kinds have none,
 * and for a sample record of each kind the row finds its unit (store.h's hf_store_record_unit),
 * the id naming it in an error, and a deep copy into a batch. (A kind without its row fails to
 * compile; these check what the compiler cannot: that each row's fields are filled in.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/core.h"
#include "store/history.h"
#include "store/records.h"
#include "store/store.h"

static const hf_mutation_item_t LINES[] = {{"A-1", 0}, {"GA", 2}};
static const uint8_t HASH[32] = {1, 2, 3};
static hf_event_definition_t definition = {.id = "E1", .name = "Arena", .currency = "USD"};
static const hf_resource_definition_t RESOURCES[] = {{.id = "DBL", .capacity = 2}};
static hf_calendar_definition_t calendar = {
    .id = "C1", .unit = HF_CALENDAR_NIGHT, .resource_count = 1, .resources = RESOURCES};

static const hf_mutation_allocation_seat_t ALLOCATION_SEATS[] = {{"A-1", false}, {"A-2", true}};
static const hf_mutation_allocation_pool_t ALLOCATION_POOLS[] = {{"GA", 5, 1}};

/* One record of each kind, its unit and the id that names it. */
typedef struct sample {
    hf_mutation_t record;
    const char *unit, *subject;
} sample_t;

static const sample_t SAMPLES[] = {
    {{.type = HF_MUTATION_EVENT_CREATE, .as.event_create = {"E1", &definition}}, "E1", "E1"},
    {{.type = HF_MUTATION_SEAT, .as.seat = {"E1", "A-1", 1, 2, 0}}, "E1", "A-1"},
    {{.type = HF_MUTATION_HOLD_CREATE,
      .as.hold_create = {.hold_id = "h1",
                         .event_id = "E1",
                         .user_id = "u1",
                         .items = {LINES, 1, 1, NULL},
                         .total = 100,
                         .expires_at_ms = 5000,
                         .status = HF_HOLD_HELD}},
     "E1",
     "h1"},
    {{.type = HF_MUTATION_HOLD_UPDATE,
      .as.hold_update = {.hold_id = "h1",
                         .event_id = "E1",
                         .user_id = "u1",
                         .expires_at_ms = 5000,
                         .status = HF_HOLD_RELEASED}},
     "E1",
     "h1"},
    {{.type = HF_MUTATION_ORDER_CREATE,
      .as.order_create = {.order_id = "o1",
                          .event_id = "E1",
                          .user_id = "u1",
                          .hold_id = "h1",
                          .currency = "USD",
                          .payment_ref = "pay",
                          .items = {LINES, 1, 1, NULL},
                          .total = 100}},
     "E1",
     "o1"},
    {{.type = HF_MUTATION_ORDER_ITEM, .as.order_item = {"o1", "E1", NULL, "GA", 2}}, "E1", "GA"},
    {{.type = HF_MUTATION_ORDER_UPDATE,
      .as.order_update =
          {.order_id = "o1", .event_id = "E1", .user_id = "u1", .status = HF_ORDER_CANCELLED}},
     "E1",
     "o1"},
    {{.type = HF_MUTATION_IDEMPOTENCY, .as.idempotency = {"POST /k", "{}", HASH, 201, "E2"}},
     "E2",
     "POST /k"},
    {{.type = HF_MUTATION_POOL, .as.pool = {"E1", "GA", 3, 1, 1, 0}}, "E1", "GA"},
    {{.type = HF_MUTATION_EVENT_SALES, .as.event_sales = {"E1", false}}, "E1", "E1"},
    /* A delivery's unit is its hold's event, not its own event_id (the provider's). */
    {{.type = HF_MUTATION_DELIVERY,
      .as.delivery = {.payment_intent_id = "pi1",
                      .event_id = "evt_1",
                      .reservation_id = "h1",
                      .hold_event_id = "E3"}},
     "E3",
     "pi1"},
    {{.type = HF_MUTATION_REFUND,
      .as.refund = {.refund_id = "r1", .payment_intent_id = "pi1", .event_id = NULL}},
     HF_STORE_UNIT_NONE,
     "r1"},
    {{.type = HF_MUTATION_TICKET_CREATE, .as.ticket = {"t1", "E4", "u1", 1, 0, 0}}, "E4", "t1"},
    {{.type = HF_MUTATION_TICKET_UPDATE, .as.ticket = {"t1", "E4", NULL, 1, 1, 9}}, "E4", "t1"},
    {{.type = HF_MUTATION_EVENT_UPDATE,
      .as.event_update = {"E1", &definition, &definition, HF_EVENT_MEMBER_NAME}},
     "E1",
     "E1"},
    {{.type = HF_MUTATION_EVENT_DELETE, .as.event_delete = {"E5"}}, "E5", "E5"},
    {{.type = HF_MUTATION_DRIVER, .as.driver = {"F1", "d1", 1.0, 2.0, 4.5, true, false}},
     "F1",
     "d1"},
    {{.type = HF_MUTATION_RIDE, .as.ride = {.ride_id = "r9", .fleet_id = "F1", .rider_id = "x"}},
     "F1",
     "r9"},
    /* A notification's state is fenced on its entry's unit. */
    {{.type = HF_MUTATION_NOTIFY, .as.notify = {.unit = "E6", .seq = 3}}, "E6", "E6"},
    {{.type = HF_MUTATION_WAITLIST,
      .as.waitlist = {.waitlist_id = "w_1",
                      .event_id = "E7",
                      .user_id = "u1",
                      .hold_id = "res_1",
                      .quantity = 2,
                      .status = HF_WAITLIST_OFFERED}},
     "E7",
     "w_1"},
    /* An order's lock is the old order's unit's. */
    {{.type = HF_MUTATION_ORDER_LOCK, .as.order_lock = {"ord_1", "E8", "res_2", "E9", true}},
     "E8",
     "ord_1"},
    {{.type = HF_MUTATION_CALENDAR_CREATE, .as.calendar_create = {"C1", &calendar}}, "C1", "C1"},
    {{.type = HF_MUTATION_CALENDAR_RESOURCES, .as.calendar_resources = {"C1", RESOURCES, 1, 1}},
     "C1",
     "C1"},
    {{.type = HF_MUTATION_CALENDAR_SALES, .as.calendar_sales = {"C1", true}}, "C1", "C1"},
    {{.type = HF_MUTATION_CALENDAR_CHANGE,
      .as.calendar_change = {"C1", "DBL", 0, 20000, 20003, -1}},
     "C1",
     "DBL"},
    /* An allocation is its event's, named by its id, and told in its history. */
    {{.type = HF_MUTATION_ALLOCATION,
      .as.allocation = {.event_id = "E1",
                        .allocation_id = "amex",
                        .seats = ALLOCATION_SEATS,
                        .seat_count = 2,
                        .pools = ALLOCATION_POOLS,
                        .pool_count = 1,
                        .change = HF_ALLOCATION_CREATED}},
     "E1",
     "amex"},
    /* A cancel job's records are its event's; a job's subject is the job, an offer's its
     * order. */
    {{.type = HF_MUTATION_EVENT_CANCEL, .as.job = {.job_id = "job_1", .event_id = "E7"}},
     "E7",
     "job_1"},
    {{.type = HF_MUTATION_JOB,
      .as.job = {.job_id = "job_1", .event_id = "E7", .status = 1, .finished = true}},
     "E7",
     "job_1"},
    {{.type = HF_MUTATION_JOB_OFFER,
      .as.job_offer = {.job_id = "job_1", .event_id = "E7", .order_id = "o7", .user_id = "u"}},
     "E7",
     "o7"},
};
#define SAMPLE_COUNT (sizeof SAMPLES / sizeof SAMPLES[0])

#define KIND_NUMBER(KIND, value, lower, member) HF_MUTATION_##KIND,
static const hf_mutation_type_t KINDS[] = {HF_RECORD_KINDS(KIND_NUMBER)};

static bool is_kind(size_t number) {
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if ((size_t)KINDS[i] == number) return true;
    return false;
}

static void every_kind_has_a_whole_row(void **state) {
    (void)state;
    assert_int_equal(sizeof KINDS / sizeof KINDS[0], HF_RECORD_KIND_COUNT);
    for (size_t i = 0; i < HF_RECORD_KIND_COUNT; i++) {
        const hf_record_row_t *row = hf_record_row(KINDS[i]);
        assert_non_null(row->name);
        assert_non_null(row->copy);
        /* Offset 0 is the record's type: a row left without its unit or subject has 0. */
        assert_true(row->unit >= offsetof(hf_mutation_t, as));
        assert_true(row->subject >= offsetof(hf_mutation_t, as));
        /* History: both functions, or neither. */
        assert_true((row->history_type == NULL) == (row->history_data == NULL));
    }
    /* The numbers between kinds have no row, and no row is there for a number no kind has. */
    for (size_t number = 0; number < HF_RECORD_KIND_LIMIT; number++)
        if (!is_kind(number)) assert_null(hf_record_rows[number].name);
    assert_string_equal(hf_record_name(HF_MUTATION_HOLD_CREATE), "HOLD_CREATE");
    assert_string_equal(hf_record_name(17), "unknown");
    assert_string_equal(hf_record_name(-1), "unknown");
}

/* Each sample's kind, once: the samples cover the list. */
static void samples_cover_every_kind(void **state) {
    (void)state;
    assert_int_equal(SAMPLE_COUNT, HF_RECORD_KIND_COUNT);
    for (size_t i = 0; i < HF_RECORD_KIND_COUNT; i++) {
        size_t seen = 0;
        for (size_t s = 0; s < SAMPLE_COUNT; s++) seen += SAMPLES[s].record.type == KINDS[i];
        assert_int_equal(seen, 1);
    }
}

static void each_kind_finds_its_unit_and_subject(void **state) {
    (void)state;
    for (size_t s = 0; s < SAMPLE_COUNT; s++) {
        const hf_mutation_t *record = &SAMPLES[s].record;
        assert_string_equal(hf_store_record_unit(record), SAMPLES[s].unit);
        assert_string_equal(hf_record_subject(record), SAMPLES[s].subject);
    }
    /* Records of no unit: a key of a request about none, a delivery for an unknown hold. */
    hf_mutation_t key = SAMPLES[7].record;
    key.as.idempotency.unit = "";
    assert_string_equal(hf_store_record_unit(&key), HF_STORE_UNIT_NONE);
    hf_mutation_t delivery = SAMPLES[10].record;
    delivery.as.delivery.hold_event_id = NULL;
    assert_string_equal(hf_store_record_unit(&delivery), HF_STORE_UNIT_NONE);
    /* An order item of a seat is named by its seat. */
    hf_mutation_t item = SAMPLES[5].record;
    item.as.order_item.seat_id = "A-1";
    item.as.order_item.pool_id = NULL;
    assert_string_equal(hf_record_subject(&item), "A-1");
    /* A fleet's unit is not an event's: a batch of a ride and a seat has two units. */
    hf_batch_t *batch = hf_batch_create();
    hf_batch_append(batch, &SAMPLES[17].record);
    hf_batch_append(batch, &SAMPLES[1].record);
    hf_batch_append(batch, &SAMPLES[16].record);
    const char *units[4];
    assert_int_equal(hf_store_batch_units(batch, units, 4), 2);
    assert_string_equal(units[0], "F1");
    assert_string_equal(units[1], "E1");
    hf_batch_destroy(batch);
}

/* The copy owns what it points to: its unit and subject read the same from the batch's own
 * memory, and its history entry is the original's. */
static void each_kind_copies_deeply(void **state) {
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    for (size_t s = 0; s < SAMPLE_COUNT; s++) hf_batch_append(batch, &SAMPLES[s].record);
    hf_buffer_t original = {0}, copied = {0};
    for (size_t s = 0; s < SAMPLE_COUNT; s++) {
        const hf_mutation_t *record = &SAMPLES[s].record, *copy = hf_batch_at(batch, s);
        assert_int_equal(copy->type, record->type);
        const hf_record_row_t *row = hf_record_row(copy->type);
        const char *unit = hf_record_text(copy, row->unit);
        if (unit != NULL) {
            assert_ptr_not_equal(unit, hf_record_text(record, row->unit));
            assert_string_equal(unit, hf_record_text(record, row->unit));
        }
        assert_ptr_not_equal(hf_record_subject(copy), hf_record_subject(record));
        assert_string_equal(hf_record_subject(copy), hf_record_subject(record));
        const char *type, *event_id, *copy_type, *copy_event_id;
        bool entry = hf_history_entry_of(record, &type, &event_id);
        assert_int_equal(hf_history_entry_of(copy, &copy_type, &copy_event_id), entry);
        if (!entry) continue;
        assert_string_equal(copy_type, type);
        assert_string_equal(copy_event_id, event_id);
        hf_buffer_reset(&original);
        hf_buffer_reset(&copied);
        hf_history_data_write(&original, record);
        hf_history_data_write(&copied, copy);
        assert_int_equal(copied.length, original.length);
        assert_memory_equal(copied.data, original.data, original.length);
    }
    hf_buffer_free(&original);
    hf_buffer_free(&copied);
    hf_batch_destroy(batch);
}

/* The kinds that make history entries, by the samples: what history.h lists. */
static void history_entries_by_kind(void **state) {
    (void)state;
    const char *expected[HF_RECORD_KIND_LIMIT] = {
        [HF_MUTATION_HOLD_CREATE] = "hold",          [HF_MUTATION_HOLD_UPDATE] = "release",
        [HF_MUTATION_ORDER_CREATE] = "commit",       [HF_MUTATION_ORDER_UPDATE] = "cancel",
        [HF_MUTATION_DELIVERY] = "payment",          [HF_MUTATION_EVENT_UPDATE] = "event_update",
        [HF_MUTATION_EVENT_CANCEL] = "event_cancel", [HF_MUTATION_JOB] = "job_done",
        [HF_MUTATION_ALLOCATION] = "allocation",     [HF_MUTATION_WAITLIST] = "waitlist_offer"};
    for (size_t s = 0; s < SAMPLE_COUNT; s++) {
        const hf_mutation_t *record = &SAMPLES[s].record;
        const char *type, *event_id;
        bool entry = hf_history_entry_of(record, &type, &event_id);
        const char *want = expected[record->type];
        assert_int_equal(entry, want != NULL);
        if (want == NULL) continue;
        assert_string_equal(type, want);
        assert_string_equal(event_id, SAMPLES[s].unit);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_has_a_whole_row),
        cmocka_unit_test(samples_cover_every_kind),
        cmocka_unit_test(each_kind_finds_its_unit_and_subject),
        cmocka_unit_test(each_kind_copies_deeply),
        cmocka_unit_test(history_entries_by_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
