/* The decoding of calendars' bodies (api/calendar_decode.c): a definition's defaults, the
 * path and rule of every wrong field, resources appended, a hold's items in both units, and
 * steps written back as their unit's text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/calendar_decode.h"
#include "lib/buffer.h"

static json_t *parse(const char *text) {
    json_error_t error;
    json_t *value = json_loads(text, 0, &error);
    if (!value) fail_msg("bad test JSON at %d: %s", error.position, error.text);
    return value;
}

/* Decodes text as a definition; the fault's field, or "" when it decoded. */
static const char *definition_fault(const char *text, hf_calendar_definition_t *definition,
                                    hf_calendar_fault_t *fault) {
    json_t *body = parse(text);
    hf_resource_definition_t *resources;
    bool decoded = hf_calendar_decode_definition(body, definition, &resources, fault);
    free(resources);
    json_decref(body);
    if (decoded) fault->field[0] = '\0';
    return fault->field;
}

static void test_defaults(void **state) {
    (void)state;
    json_t *body = parse("{\"id\": \"lisbon\", \"unit\": \"night\", \"resources\": "
                         "[{\"id\": \"DBL\"}, {\"id\": \"SUITE\", \"capacity\": 3}]}");
    hf_calendar_definition_t definition;
    hf_resource_definition_t *resources;
    hf_calendar_fault_t fault;
    assert_true(hf_calendar_decode_definition(body, &definition, &resources, &fault));
    assert_string_equal(definition.currency, "USD");
    assert_int_equal(definition.unit, HF_CALENDAR_NIGHT);
    assert_int_equal(definition.granularity_min, 1440);
    assert_int_equal(definition.hold_ttl_ms, 600000);
    assert_int_equal(definition.max_hold_ms, 1800000);
    assert_int_equal(definition.horizon_days, 365);
    assert_int_equal(definition.max_items_per_hold, 10);
    assert_int_equal(definition.max_uses_per_user, 0);
    assert_int_equal(definition.resource_count, 2);
    assert_ptr_equal(definition.resources, resources);
    assert_int_equal(resources[0].capacity, 1);
    assert_int_equal(resources[0].price, 0);
    assert_int_equal(resources[0].min_length, 1);
    assert_int_equal(resources[0].max_length, 365);
    assert_int_equal(resources[1].capacity, 3);
    free(resources);
    json_decref(body);
    body = parse("{\"id\": \"c\", \"unit\": \"minute\", \"horizon_days\": 10, \"hold_ttl_s\": 1.5,"
                 " \"resources\": [{\"id\": \"dr\", \"buffer_after_min\": 10}]}");
    assert_true(hf_calendar_decode_definition(body, &definition, &resources, &fault));
    assert_int_equal(definition.granularity_min, 15);
    assert_int_equal(definition.hold_ttl_ms, 1500);
    assert_int_equal(definition.max_hold_ms, 4500);
    assert_int_equal(resources[0].max_length, 10 * 1440);
    assert_int_equal(resources[0].buffer_after_min, 10);
    free(resources);
    json_decref(body);
}

static void test_faults(void **state) {
    (void)state;
    static const struct {
        const char *body, *field;
    } cases[] = {
        {"[]", "body"},
        {"{\"unit\": \"night\"}", "id"},
        {"{\"id\": \"a b\", \"unit\": \"night\"}", "id"},
        {"{\"id\": \"c\"}", "unit"},
        {"{\"id\": \"c\", \"unit\": \"hour\"}", "unit"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"currency\": \"usd\"}", "currency"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"currency\": 978}", "currency"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"name\": \"\"}", "name"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"granularity_min\": 60}", "granularity_min"},
        {"{\"id\": \"c\", \"unit\": \"minute\", \"granularity_min\": 7}", "granularity_min"},
        {"{\"id\": \"c\", \"unit\": \"minute\", \"granularity_min\": 0}", "granularity_min"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"horizon_days\": 1101}", "horizon_days"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"hold_ttl_s\": -1}", "hold_ttl_s"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"hold_ttl_s\": 60, \"max_hold_s\": 59}",
         "max_hold_s"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"max_items_per_hold\": 101}", "max_items_per_hold"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"max_uses_per_user\": 1.5}", "max_uses_per_user"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": {}}", "resources"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": [{\"id\": \"A\"}, 7]}",
         "resources[1]"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": [{\"id\": \"A\", \"capacity\": 0}]}",
         "resources[0].capacity"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": [{\"price\": 1}]}",
         "resources[0].id"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": [{\"id\": \"A\", \"price\": -1}]}",
         "resources[0].price"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"horizon_days\": 5, \"resources\": "
         "[{\"id\": \"A\", \"max_length\": 6}]}",
         "resources[0].max_length"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": [{\"id\": \"A\", \"min_length\": 3,"
         " \"max_length\": 2}]}",
         "resources[0].max_length"},
        {"{\"id\": \"c\", \"unit\": \"night\", \"resources\": [{\"id\": \"A\", "
         "\"buffer_before_min\": 5}]}",
         "resources[0].buffer_before_min"},
        {"{\"id\": \"c\", \"unit\": \"minute\", \"resources\": [{\"id\": \"A\", "
         "\"buffer_after_min\": 1441}]}",
         "resources[0].buffer_after_min"},
    };
    hf_calendar_definition_t definition;
    hf_calendar_fault_t fault;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *field = definition_fault(cases[i].body, &definition, &fault);
        if (strcmp(field, cases[i].field) != 0)
            fail_msg("%s: field \"%s\", expected \"%s\"", cases[i].body, field, cases[i].field);
        /* The message starts with the path, then says what the value must be. */
        assert_int_equal(strncmp(fault.message, cases[i].field, strlen(cases[i].field)), 0);
        assert_true(strlen(fault.message) > strlen(cases[i].field) + 1);
    }
}

static void test_resources_appended(void **state) {
    (void)state;
    hf_calendar_definition_t calendar = {.unit = HF_CALENDAR_MINUTE, .horizon_days = 2};
    hf_resource_definition_t *resources;
    uint32_t count;
    hf_calendar_fault_t fault;
    json_t *body = parse("{\"resources\": [{\"id\": \"a\"}, {\"id\": \"b\", \"price\": 5}]}");
    assert_true(hf_calendar_decode_resources(body, &calendar, &resources, &count, &fault));
    assert_int_equal(count, 2);
    assert_int_equal(resources[0].max_length, 2 * 1440);
    assert_int_equal(resources[1].price, 5);
    free(resources);
    json_decref(body);
    body = parse("{\"resources\": []}");
    assert_false(hf_calendar_decode_resources(body, &calendar, &resources, &count, &fault));
    assert_string_equal(fault.field, "resources");
    free(resources);
    json_decref(body);
}

static void test_items(void **state) {
    (void)state;
    hf_calendar_item_request_t items[HF_CALENDAR_HOLD_ITEMS_MAX];
    uint32_t count;
    hf_calendar_fault_t fault;
    json_t *body = parse("{\"items\": [{\"resource\": \"DBL\", \"from\": \"2026-12-24\", \"to\":"
                         " \"2026-12-27\", \"quantity\": 2}, {\"resource\": \"P\", \"from\":"
                         " \"2026-12-24\", \"to\": \"2026-12-25\"}]}");
    assert_true(hf_calendar_decode_items(body, HF_CALENDAR_NIGHT, items, &count, &fault));
    assert_int_equal(count, 2);
    assert_string_equal(items[0].resource_id, "DBL");
    assert_int_equal(items[0].from, 20811);
    assert_int_equal(items[0].to, 20814);
    assert_int_equal(items[0].quantity, 2);
    assert_int_equal(items[1].quantity, 1);
    json_decref(body);
    body = parse("{\"items\": [{\"resource\": \"dr\", \"from\": \"2026-12-24T10:00:00+01:00\","
                 " \"to\": \"2026-12-24T09:30:00Z\"}]}");
    assert_true(hf_calendar_decode_items(body, HF_CALENDAR_MINUTE, items, &count, &fault));
    assert_int_equal(items[0].from, 20811 * 1440 + 540);
    assert_int_equal(items[0].to, 20811 * 1440 + 570);
    json_decref(body);
    static const struct {
        const char *body, *field;
    } refused[] = {
        {"{}", "items"},
        {"{\"items\": []}", "items"},
        {"{\"items\": [1]}", "items[0]"},
        {"{\"items\": [{\"from\": \"2026-12-24\", \"to\": \"2026-12-25\"}]}", "items[0].resource"},
        {"{\"items\": [{\"resource\": \"R\", \"from\": \"24/12\", \"to\": \"2026-12-25\"}]}",
         "items[0].from"},
        {"{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\"}]}", "items[0].to"},
        {"{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
         " \"quantity\": 0}]}",
         "items[0].quantity"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        body = parse(refused[i].body);
        assert_false(hf_calendar_decode_items(body, HF_CALENDAR_NIGHT, items, &count, &fault));
        if (strcmp(fault.field, refused[i].field) != 0)
            fail_msg("%s: field \"%s\", expected \"%s\"", refused[i].body, fault.field,
                     refused[i].field);
        json_decref(body);
    }
    body = parse("{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24T09:00:30Z\", \"to\":"
                 " \"2026-12-24T10:00:00Z\"}]}");
    assert_false(hf_calendar_decode_items(body, HF_CALENDAR_MINUTE, items, &count, &fault));
    assert_string_equal(fault.field, "items[0].from");
    assert_non_null(strstr(fault.message, "misaligned"));
    json_decref(body);
}

static hf_flat_json_t flat; /* large: off the stack */

/* Decodes body both ways, from jansson's DOM and from the flat reader's reading, and checks
 * that the two agree: the same outcome, the same fault, the same items. */
static void decode_both_ways(const char *text) {
    hf_calendar_item_request_t from_json[HF_CALENDAR_HOLD_ITEMS_MAX];
    hf_calendar_item_request_t from_flat[HF_CALENDAR_HOLD_ITEMS_MAX];
    uint32_t json_count = 0, flat_count = 0;
    hf_calendar_fault_t json_fault = {0}, flat_fault = {0};
    if (!hf_flat_json_read(&flat, text, strlen(text))) fail_msg("not read flat: %s", text);
    json_t *body = parse(text);
    bool json_read = hf_calendar_decode_items(body, HF_CALENDAR_NIGHT, from_json, &json_count,
                                              &json_fault);
    bool flat_read = hf_calendar_decode_flat_items(&flat, HF_CALENDAR_NIGHT, from_flat, &flat_count,
                                                   &flat_fault);
    if (json_read != flat_read) fail_msg("outcomes differ: %s", text);
    assert_string_equal(json_fault.field, flat_fault.field);
    assert_string_equal(json_fault.message, flat_fault.message);
    /* The count is the decoder's only when it succeeds. */
    if (json_read) assert_int_equal(json_count, flat_count);
    for (uint32_t i = 0; json_read && i < json_count; i++) {
        assert_string_equal(from_json[i].resource_id, from_flat[i].resource_id);
        assert_int_equal(from_json[i].from, from_flat[i].from);
        assert_int_equal(from_json[i].to, from_flat[i].to);
        assert_int_equal(from_json[i].quantity, from_flat[i].quantity);
    }
    json_decref(body);
}

static void test_flat_items_decode_as_jansson_items(void **state) {
    (void)state;
    static const char *const bodies[] = {
        "{\"items\": [{\"resource\": \"DBL\", \"from\": \"2026-12-24\", \"to\": \"2026-12-27\","
        " \"quantity\": 2}, {\"resource\": \"P\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
        " \"note\": null}]}",
        "{}",
        "{\"items\": []}",
        "{\"items\": \"x\"}",
        "{\"items\": 3}",
        "{\"items\": null}",
        "{\"items\": [\"a\", \"b\"]}",
        "{\"items\": [{}]}",
        "{\"items\": [{\"resource\": \"\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\"}]}",
        "{\"items\": [{\"resource\": 7, \"from\": \"2026-12-24\", \"to\": \"2026-12-25\"}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": 20811, \"to\": \"2026-12-25\"}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"24/12\", \"to\": \"2026-12-25\"}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2020-12-24\", \"to\": \"2026-12-25\"}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\"}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
        " \"quantity\": 0}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
        " \"quantity\": 1.0}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
        " \"quantity\": null}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
        " \"quantity\": \"2\"}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\","
        " \"quantity\": 1000000001}]}",
        "{\"items\": [{\"resource\": \"R\", \"from\": \"2026-12-24\", \"to\": \"2026-12-25\"},"
        " {\"resource\": \"S\", \"to\": \"2026-12-25\"}]}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) decode_both_ways(bodies[i]);
}

static void test_steps_written(void **state) {
    (void)state;
    hf_buffer_t out;
    hf_buffer_init(&out);
    hf_json_t json;
    hf_json_init(&json, &out);
    hf_json_array_begin(&json);
    hf_calendar_step_json(&json, HF_CALENDAR_NIGHT, 20811);
    hf_calendar_step_json(&json, HF_CALENDAR_MINUTE, 20811 * 1440 + 570);
    hf_json_array_end(&json);
    hf_buffer_append(&out, "", 1);
    assert_string_equal((const char *)out.data, "[\"2026-12-24\",\"2026-12-24T09:30:00.000Z\"]");
    hf_buffer_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_resources_appended),
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_flat_items_decode_as_jansson_items),
        cmocka_unit_test(test_steps_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
