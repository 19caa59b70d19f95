/* Unit tests of engine/errors.h: every core error has its code and HTTP status in the one table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "core/core.h"
#include "lib/map.h"
#include "core_fixtures.h"

/* ---- error codes ---- */

/* Every core error has its code and HTTP status in the engine's one table. */
static void test_error_codes(void **state) {
    (void)state;
    static const struct {
        hf_error_t error;
        const char *code;
        int status;
    } table[] = {
        {HF_ERROR_INVALID_REQUEST, "invalid_request", 400},
        {HF_ERROR_EVENT_EXISTS, "event_exists", 409},
        {HF_ERROR_EVENT_NOT_FOUND, "event_not_found", 404},
        {HF_ERROR_SEAT_NOT_FOUND, "seat_not_found", 404},
        {HF_ERROR_SEATS_UNAVAILABLE, "seats_unavailable", 409},
        {HF_ERROR_POOL_NOT_FOUND, "pool_not_found", 404},
        {HF_ERROR_INSUFFICIENT_QUANTITY, "insufficient_quantity", 409},
        {HF_ERROR_USER_LIMIT_EXCEEDED, "user_limit_exceeded", 429},
        {HF_ERROR_HOLD_NOT_FOUND, "hold_not_found", 404},
        {HF_ERROR_NOT_OWNER, "not_owner", 403},
        {HF_ERROR_HOLD_EXPIRED, "hold_expired", 410},
        {HF_ERROR_HOLD_NOT_ACTIVE, "hold_not_active", 409},
        {HF_ERROR_ALREADY_CONFIRMED, "already_confirmed", 409},
        {HF_ERROR_HOLD_RELEASED, "hold_released", 409},
        {HF_ERROR_ORDER_NOT_FOUND, "order_not_found", 404},
        {HF_ERROR_SALES_CLOSED, "sales_closed", 409},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const hf_api_error_entry_t *entry = hf_errors_entry(hf_errors_from_core(table[i].error));
        assert_string_equal(entry->code, table[i].code);
        assert_int_equal(entry->status, table[i].status);
        assert_non_null(entry->message);
    }
    const hf_api_error_entry_t *capacity = hf_errors_entry(hf_errors_from_core(HF_ERROR_CAPACITY));
    assert_string_equal(capacity->code, "capacity_exceeded");
    assert_true(capacity->status >= 400);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_codes),
    };
    return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
