/* Unit tests of engine/notification.h and lib/hmac.h: the retry schedule, the type of each
 * history entry, the id, the body, and the signature a receiver verifies (API.md section 15). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "engine/notification.h"
#include "lib/hmac.h"

/* 1 s, then doubling, and never more than an hour apart. */
static void test_backoff_doubles_from_one_second_up_to_an_hour(void **state) {
    (void)state;
    const int64_t expected[] = {1000,   2000,   4000,   8000,    16000,   32000,   64000,
                                128000, 256000, 512000, 1024000, 2048000, 3600000, 3600000};
    for (uint32_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        assert_int_equal(hf_notify_backoff_ms(i + 1), expected[i]);
    assert_int_equal(hf_notify_backoff_ms(1000000), HF_NOTIFY_BACKOFF_MAX_MS);
}

/* Retried for 3 days from the change, then failed: the whole schedule, attempt by attempt,
 * reaches the end of the third day and stops there. */
static void test_retries_end_three_days_after_the_change(void **state) {
    (void)state;
    const int64_t at = 1700000000000;
    int64_t now = at;
    uint32_t attempts = 0;
    int64_t next;
    while ((next = hf_notify_next_attempt_ms(at, now, ++attempts)) >= 0) {
        assert_true(next > now);
        assert_true(next - now <= HF_NOTIFY_BACKOFF_MAX_MS);
        now = next;
    }
    assert_true(now <= at + HF_NOTIFY_RETRY_FOR_MS);
    assert_true(now > at + HF_NOTIFY_RETRY_FOR_MS - HF_NOTIFY_BACKOFF_MAX_MS);
    /* 12 doublings up to the hour (about 68 minutes), then one an hour to 72 hours. */
    assert_in_range(attempts, 80, 84);
}

static void test_each_history_type_has_its_notification_type(void **state) {
    (void)state;
    static const char *const pairs[][2] = {{"hold", "hold.created"},
                                           {"extend", "hold.extended"},
                                           {"release", "hold.released"},
                                           {"expiry", "hold.expired"},
                                           {"commit", "order.confirmed"},
                                           {"booking", "order.confirmed"},
                                           {"cancel", "order.cancelled"},
                                           {"exchange", "order.exchanged"},
                                           {"payment", "payment.recorded"},
                                           {"event_update", "event.updated"},
                                           {"waitlist_offer", "offer.created"},
                                           {"waitlist_lapsed", "offer.lapsed"},
                                           {"job_done", "job.done"},
                                           {"something_new", "history.something_new"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char type[64];
        hf_notify_type_of(pairs[i][0], type, sizeof type);
        assert_string_equal(type, pairs[i][1]);
    }
}

static void test_ids_name_their_unit_and_seq(void **state) {
    (void)state;
    char id[HF_NOTIFY_ID_SIZE], unit[HF_ID_SIZE_MAX + 1];
    int64_t seq = 0;
    hf_notify_id_write("sailing_1.a", 812, id);
    assert_string_equal(id, "nt_812_sailing_1.a");
    assert_true(hf_notify_id_parse(id, unit, &seq));
    assert_string_equal(unit, "sailing_1.a");
    assert_int_equal(seq, 812);
    static const char *const refused[] = {"",
                                          "nt_",
                                          "nt_812",
                                          "nt_812_",
                                          "nt__e1",
                                          "nt_0_e1",
                                          "nt_012_e1",
                                          "xx_1_e1",
                                          "nt_1_e-1",
                                          "nt_1x_e1",
                                          "nt_1234567890123456789_e1"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_false(hf_notify_id_parse(refused[i], unit, &seq));
}

static void test_status_words(void **state) {
    (void)state;
    for (int status = HF_NOTIFY_PENDING; status <= HF_NOTIFY_FAILED; status++)
        assert_int_equal(hf_notify_status_parse(hf_notify_status_name(status)), status);
    assert_int_equal(hf_notify_status_parse("sent"), -1);
    assert_null(hf_notify_status_name(3));
}

/* {"id","type","unit","seq","at","data"}, data the entry as given. */
static void test_the_body_carries_the_entry(void **state) {
    (void)state;
    hf_buffer_t out = {0};
    static const char entry[] = "{\"seq\":7,\"type\":\"commit\",\"order_id\":\"ord_1\"}";
    hf_notify_body_write(&out, "event", "e1", 7, 1700000000123, "commit", entry, strlen(entry));
    json_error_t error;
    json_t *body = json_loadb(out.data, out.length, 0, &error);
    assert_non_null(body);
    assert_string_equal(json_string_value(json_object_get(body, "id")), "nt_7_e1");
    assert_string_equal(json_string_value(json_object_get(body, "type")), "order.confirmed");
    assert_string_equal(json_string_value(json_object_get(body, "unit")), "event:e1");
    assert_int_equal(json_integer_value(json_object_get(body, "seq")), 7);
    assert_string_equal(json_string_value(json_object_get(body, "at")), "2023-11-14T22:13:20.123Z");
    json_t *data = json_object_get(body, "data");
    assert_string_equal(json_string_value(json_object_get(data, "order_id")), "ord_1");
    assert_int_equal(json_object_size(body), 6);
    json_decref(body);
    hf_buffer_free(&out);
}

/* The header is t=SECONDS,v1=HEX with HEX HMAC-SHA256(secret, "t.body"), computed here by
 * OpenSSL's one-shot HMAC as a receiver would. */
static void test_the_signature_is_section_7s(void **state) {
    (void)state;
    static const char body[] = "{\"id\":\"nt_1_e1\"}";
    char header[HF_HMAC_HEADER_SIZE];
    assert_true(hf_hmac_signature_header("whsec", 1796191750, body, strlen(body), header));
    assert_int_equal(strncmp(header, "t=1796191750,v1=", 16), 0);
    static const char signed_text[] = "1796191750.{\"id\":\"nt_1_e1\"}";
    unsigned char digest[32];
    unsigned int length = 0;
    HMAC(EVP_sha256(), "whsec", 5, (const unsigned char *)signed_text, strlen(signed_text), digest,
         &length);
    char hex[65];
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    assert_string_equal(header + 16, hex);
    assert_int_equal(strlen(header), 16 + 64);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_doubles_from_one_second_up_to_an_hour),
        cmocka_unit_test(test_retries_end_three_days_after_the_change),
        cmocka_unit_test(test_each_history_type_has_its_notification_type),
        cmocka_unit_test(test_ids_name_their_unit_and_seq),
        cmocka_unit_test(test_status_words),
        cmocka_unit_test(test_the_body_carries_the_entry),
        cmocka_unit_test(test_the_signature_is_section_7s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
