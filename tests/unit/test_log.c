/* The log (lib/log.c): every line one JSON object with ts, level and msg, fields in order,
 * levels filtered, long lines cut and still valid, and redaction of registered secrets, bearer
 * tokens and card-like numbers, in the message and in every field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "lib/log.h"

#define SECRET "s3cr3t-Key_value"

static char *redacted(const char *text) {
    static char out[1024];
    hf_log_redact(text, strlen(text), out, sizeof out);
    return out;
}

static void test_redact_secrets_and_bearer(void **state) {
    (void)state;
    hf_log_secret_add(SECRET);
    assert_string_equal(redacted("key=" SECRET "!"), "key=[redacted]!");
    assert_string_equal(redacted(SECRET SECRET), "[redacted][redacted]");
    assert_string_equal(redacted("Authorization: Bearer abc.def-123 rest"),
                        "Authorization: Bearer [redacted] rest");
    assert_string_equal(redacted("bearer   tok,en"), "Bearer [redacted],en");
    /* A word merely containing "bearer" is not a token's introduction. */
    assert_string_equal(redacted("forbearer x"), "forbearer x");
    assert_string_equal(redacted("nothing here"), "nothing here");
}

/* User and admission tokens never show (API.md section 16): in a stream's URL, or quoted
 * anywhere as the JWT they are. */
static void test_redact_tokens_in_urls_and_jwts(void **state) {
    (void)state;
    assert_string_equal(redacted("GET /v1/events/e1/stream?access_token=abc.def&x=1"),
                        "GET /v1/events/e1/stream?access_token=[redacted]&x=1");
    assert_string_equal(redacted("?ACCESS_TOKEN=k3y"), "?access_token=[redacted]");
    assert_string_equal(redacted("my_access_token=k"), "my_access_token=k");
    assert_string_equal(redacted("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln-_ end"),
                        "token [redacted] end");
    assert_string_equal(redacted("#token=eyJa.eyJb.c"), "#token=[redacted]");
    /* Two parts or a run inside a word are not a JWT. */
    assert_string_equal(redacted("eyJa.eyJb"), "eyJa.eyJb");
    assert_string_equal(redacted("keyJa.b.c"), "keyJa.b.c");
}

static void test_redact_card_numbers(void **state) {
    (void)state;
    assert_string_equal(redacted("pi 4111111111111111 paid"), "pi [redacted] paid");
    assert_string_equal(redacted("4111 1111 1111 1111"), "[redacted]");
    assert_string_equal(redacted("4111-1111-1111-1111."), "[redacted].");
    assert_string_equal(redacted("ref_4111111111111111"), "ref_[redacted]");
    assert_string_equal(redacted("\"1234567890123\""), "\"[redacted]\"");
    /* 12 digits and less are left: counts, sizes, ports, years. */
    assert_string_equal(redacted("123456789012 and 2026-11-26"), "123456789012 and 2026-11-26");
    /* Digits inside a hex id are part of the id, not a card. */
    assert_string_equal(redacted("res_01a2165901234567890123ab"), "res_01a2165901234567890123ab");
}

/* Runs log calls with standard error sent to a file; returns what was written. */
static char *captured(void (*body)(void)) {
    char path[] = "/tmp/holdfast-test-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    body();
    dup2(saved, STDERR_FILENO);
    close(saved);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)size + 1);
    assert_int_equal(pread(fd, text, (size_t)size, 0), size);
    close(fd);
    unlink(path);
    return text;
}

static json_t *line_parse(const char *line, size_t length) {
    json_error_t error;
    json_t *root = json_loadb(line, length, 0, &error);
    if (!root) fail_msg("not JSON (%s): %.*s", error.text, (int)length, line);
    assert_true(json_is_object(root));
    const char *ts = json_string_value(json_object_get(root, "ts"));
    assert_non_null(ts);
    assert_int_equal(strlen(ts), 24);
    assert_true(ts[4] == '-' && ts[10] == 'T' && ts[19] == '.' && ts[23] == 'Z');
    assert_non_null(json_string_value(json_object_get(root, "level")));
    assert_non_null(json_string_value(json_object_get(root, "msg")));
    return root;
}

static void log_some(void) {
    hf_log_level_set(HF_LOG_INFO);
    HF_LOG_FIELDS(HF_LOG_WARNING, "quote \" backslash \\ newline \n bad \xff end",
                  HF_LOG_TEXT("path", "/v1/orders/ord_1"), HF_LOG_NUMBER("status", 201),
                  HF_LOG_TEXT("key", "Bearer " SECRET), HF_LOG_NUMBER("card", 4111111111111111LL),
                  HF_LOG_TEXT("ref", "4111111111111111"));
    hf_log(HF_LOG_DEBUG, "dropped at info");
    hf_log(HF_LOG_ERROR, "formatted %d %s", 42, SECRET);
}

static void test_lines_are_json_with_fields(void **state) {
    (void)state;
    hf_log_secret_add(SECRET);
    char *text = captured(log_some);
    assert_null(strstr(text, SECRET));
    assert_null(strstr(text, "4111111111111111"));
    assert_null(strstr(text, "dropped"));
    char *newline = strchr(text, '\n');
    assert_non_null(newline);
    json_t *first = line_parse(text, (size_t)(newline - text));
    assert_string_equal(json_string_value(json_object_get(first, "level")), "warn");
    assert_string_equal(json_string_value(json_object_get(first, "msg")),
                        "quote \" backslash \\ newline \n bad \xef\xbf\xbd end");
    assert_string_equal(json_string_value(json_object_get(first, "path")), "/v1/orders/ord_1");
    assert_int_equal(json_integer_value(json_object_get(first, "status")), 201);
    assert_string_equal(json_string_value(json_object_get(first, "key")), "Bearer [redacted]");
    assert_string_equal(json_string_value(json_object_get(first, "card")), "[redacted]");
    assert_string_equal(json_string_value(json_object_get(first, "ref")), "[redacted]");
    /* The fields come in the order given, after ts, level and msg. */
    assert_true(strstr(text, "\"ts\"") < strstr(text, "\"level\""));
    assert_true(strstr(text, "\"msg\"") < strstr(text, "\"path\""));
    assert_true(strstr(text, "\"path\"") < strstr(text, "\"status\""));
    char *second_end = strchr(newline + 1, '\n');
    assert_non_null(second_end);
    json_t *second = line_parse(newline + 1, (size_t)(second_end - newline - 1));
    assert_string_equal(json_string_value(json_object_get(second, "level")), "error");
    assert_string_equal(json_string_value(json_object_get(second, "msg")),
                        "formatted 42 [redacted]");
    assert_int_equal(second_end[1], '\0');
    json_decref(first);
    json_decref(second);
    free(text);
}

static void log_long(void) {
    static char message[3 * HF_LOG_LINE_SIZE_MAX];
    memset(message, '"', sizeof message - 1);
    HF_LOG_FIELDS(HF_LOG_INFO, message, HF_LOG_TEXT("after", "x"));
    hf_log_level_set(HF_LOG_DEBUG);
    hf_log(HF_LOG_DEBUG, "debug shown");
    hf_log_level_set(HF_LOG_INFO);
}

static void test_long_lines_are_cut_and_valid(void **state) {
    (void)state;
    char *text = captured(log_long);
    char *newline = strchr(text, '\n');
    assert_non_null(newline);
    assert_true((size_t)(newline - text) < HF_LOG_LINE_SIZE_MAX);
    json_t *root = line_parse(text, (size_t)(newline - text));
    assert_true(json_is_true(json_object_get(root, "truncated")));
    json_decref(root);
    assert_non_null(strstr(newline, "debug shown"));
    free(text);
}

static void test_levels_parse(void **state) {
    (void)state;
    hf_log_level_t level;
    assert_true(hf_log_level_parse("warn", &level));
    assert_int_equal(level, HF_LOG_WARNING);
    assert_true(hf_log_level_parse("debug", &level));
    assert_int_equal(level, HF_LOG_DEBUG);
    assert_false(hf_log_level_parse("warning", &level));
    assert_false(hf_log_level_parse("INFO", &level));
    assert_false(hf_log_level_parse("", &level));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redact_secrets_and_bearer),
        cmocka_unit_test(test_redact_card_numbers),
        cmocka_unit_test(test_redact_tokens_in_urls_and_jwts),
        cmocka_unit_test(test_lines_are_json_with_fields),
        cmocka_unit_test(test_long_lines_are_cut_and_valid),
        cmocka_unit_test(test_levels_parse),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
