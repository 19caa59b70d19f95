/* JSON writer strings (src/core/buffer.c): fixed cases for each escaping rule, and random
 * strings checked against a plain byte-at-a-time model of the same rules, so a faster escaper
 * can be trusted to write the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lib/json.h"

/* The text hf_json_string_length makes of length bytes at text, alone in the buffer. */
static const char *string_text(hf_buffer_t *buffer, const char *text, size_t length) {
    hf_json_t json;
    hf_buffer_reset(buffer);
    hf_json_init(&json, buffer);
    hf_json_string_length(&json, text, length);
    return buffer->data;
}

static void check_escaped(const char *text, size_t length, const char *expected) {
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    assert_string_equal(string_text(&buffer, text, length), expected);
    assert_int_equal(buffer.length, strlen(expected));
    hf_buffer_free(&buffer);
}

#define EXPECT(literal, expected) check_escaped(literal, sizeof literal - 1, expected)

static void test_json_string_plain(void **state) {
    (void)state;
    EXPECT("", "\"\"");
    EXPECT("a", "\"a\"");
    EXPECT("1234567", "\"1234567\"");
    EXPECT("12345678", "\"12345678\"");
    EXPECT("123456789", "\"123456789\"");
    EXPECT("res_0123456789abcdef0123456789abcdef0123",
           "\"res_0123456789abcdef0123456789abcdef0123\"");
    EXPECT(" ~/'`{}", "\" ~/'`{}\"");
    EXPECT("\x7f", "\"\x7f\"");
}

static void test_json_string_escapes(void **state) {
    (void)state;
    EXPECT("\"", "\"\\\"\"");
    EXPECT("\\", "\"\\\\\"");
    EXPECT("\n\r\t", "\"\\n\\r\\t\"");
    EXPECT("\b\f", "\"\\u0008\\u000c\"");
    EXPECT("\x01\x1f", "\"\\u0001\\u001f\"");
    EXPECT("a\0b", "\"a\\u0000b\"");
    /* A byte needing care at each place of an eight-byte word, and just after one. */
    EXPECT("\"bcdefgh", "\"\\\"bcdefgh\"");
    EXPECT("abcdefg\"", "\"abcdefg\\\"\"");
    EXPECT("abcdefgh\"", "\"abcdefgh\\\"\"");
    EXPECT("abc\\defghijklmnop\nq", "\"abc\\\\defghijklmnop\\nq\"");
    EXPECT("\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",
           "\"\\u001f\\u001f\\u001f\\u001f\\u001f\\u001f\\u001f\\u001f\\u001f\"");
    /* Neighbours of the escaped bytes pass as they are. */
    EXPECT("\x20\x21\x23\x5b\x5d", "\" !#[]\"");
}

static void test_json_string_utf8(void **state) {
    (void)state;
    EXPECT("\xc3\xa9", "\"\xc3\xa9\"");                 /* é */
    EXPECT("\xe2\x82\xac", "\"\xe2\x82\xac\"");         /* € */
    EXPECT("\xf0\x9f\x8e\xab", "\"\xf0\x9f\x8e\xab\""); /* a ticket emoji */
    EXPECT("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
    EXPECT("caf\xc3\xa9 caf\xc3\xa9 caf\xc3\xa9", "\"caf\xc3\xa9 caf\xc3\xa9 caf\xc3\xa9\"");
    EXPECT("abcdefg\xe2\x82\xac", "\"abcdefg\xe2\x82\xac\""); /* across a word's end */
}

static void test_json_string_invalid_utf8(void **state) {
    (void)state;
    EXPECT("\x80", "\"\\ufffd\""); /* lone continuation */
    EXPECT("\xff", "\"\\ufffd\"");
    EXPECT("\xc0\xaf", "\"\\ufffd\\ufffd\"");                       /* overlong */
    EXPECT("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");            /* overlong */
    EXPECT("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");            /* surrogate */
    EXPECT("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */
    EXPECT("\xf5\x80", "\"\\ufffd\\ufffd\"");
    /* Cut short at the end of the string, then before a plain byte. */
    EXPECT("ab\xc3", "\"ab\\ufffd\"");
    EXPECT("abcdefgh\xe2\x82", "\"abcdefgh\\ufffd\\ufffd\"");
    EXPECT("abcdefg\xf0\x9f\x8e", "\"abcdefg\\ufffd\\ufffd\\ufffd\"");
    EXPECT("\xe2\x82x", "\"\\ufffd\\ufffdx\"");
}

static void test_json_string_long(void **state) {
    (void)state;
    enum { LENGTH = 10000 };
    char *text = malloc(LENGTH);
    char *expected = malloc(6 * LENGTH + 3);
    assert_non_null(text);
    assert_non_null(expected);
    size_t written = 0;
    expected[written++] = '"';
    for (size_t i = 0; i < LENGTH; i++) {
        text[i] = i % 97 == 96 ? '"' : (char)('a' + i % 26);
        if (text[i] == '"') expected[written++] = '\\';
        expected[written++] = text[i];
    }
    expected[written++] = '"';
    expected[written] = '\0';
    check_escaped(text, LENGTH, expected);
    free(text);
    free(expected);
}

/* The escaping rules one byte at a time: the model the writer is checked against. */
static size_t model_utf8_sequence(const unsigned char *text, size_t available) {
    unsigned char c = text[0];
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (length == 0 || c >= 0xf5 || c == 0xc0 || c == 0xc1 || length > available) return 0;
    for (size_t i = 1; i < length; i++)
        if ((text[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && text[1] < 0xa0) return 0;
    if (c == 0xed && text[1] >= 0xa0) return 0;
    if (c == 0xf0 && text[1] < 0x90) return 0;
    if (c == 0xf4 && text[1] >= 0x90) return 0;
    return length;
}

static void model_escape(const unsigned char *text, size_t length, hf_buffer_t *out) {
    hf_buffer_append_char(out, '"');
    for (size_t i = 0; i < length;) {
        unsigned char c = text[i];
        if (c >= 0x80) {
            size_t sequence = model_utf8_sequence(text + i, length - i);
            if (sequence > 0) hf_buffer_append(out, text + i, sequence);
            else hf_buffer_append(out, "\\ufffd", 6);
            i += sequence > 0 ? sequence : 1;
            continue;
        }
        i++;
        if (c == '"') hf_buffer_append(out, "\\\"", 2);
        else if (c == '\\') hf_buffer_append(out, "\\\\", 2);
        else if (c == '\n') hf_buffer_append(out, "\\n", 2);
        else if (c == '\r') hf_buffer_append(out, "\\r", 2);
        else if (c == '\t') hf_buffer_append(out, "\\t", 2);
        else if (c < 0x20) hf_buffer_printf(out, "\\u%04x", c);
        else hf_buffer_append_char(out, (char)c);
    }
    hf_buffer_append_char(out, '"');
}

/* hf_json_plain_length against a byte loop: every length up to three words, with one byte
 * that needs care (or none) at every place, so each path of the word-at-a-time test runs. */
static void test_json_plain_length(void **state) {
    (void)state;
    static const unsigned char care[] = {'"', '\\', 0x00, 0x1f, 0x80, 0xff};
    char text[24];
    for (size_t length = 0; length <= sizeof text; length++) {
        for (size_t place = 0; place <= length; place++) {
            for (size_t c = 0; c < sizeof care; c++) {
                memset(text, 'x', sizeof text);
                text[length / 2] = '~'; /* plain: DEL's neighbour, the top of ASCII */
                if (place < length) text[place] = (char)care[c];
                /* The run ends at the care byte, or at the end when place is length. */
                assert_int_equal(hf_json_plain_length(text, length), place);
            }
        }
    }
    assert_int_equal(hf_json_plain_length("a\x7f b", 4), 4); /* DEL and space are plain */
}

/* Random strings, mostly plain with a few bytes of every kind, at every length up to a few
 * words, each at an odd offset too so no load is aligned by chance. */
static void test_json_string_random(void **state) {
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    printf("test_json_string_random seed %u\n", seed);
    srand(seed);
    static const unsigned char special[] = {'"',  '\\', '\n', 0,    0x1f, 0x7f, 0x80, 0xbf,
                                            0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff, 0xa9, 0x82};
    hf_buffer_t actual, expected;
    hf_buffer_init(&actual);
    hf_buffer_init(&expected);
    unsigned char text[80];
    for (int round = 0; round < 20000; round++) {
        size_t length = (size_t)rand() % 40;
        size_t offset = (size_t)rand() % 8;
        for (size_t i = 0; i < length; i++) {
            int pick = rand() % 8;
            text[offset + i] = pick == 0 ? special[rand() % (int)sizeof special]
                                         : (unsigned char)(0x20 + rand() % 0x5f);
        }
        hf_buffer_reset(&expected);
        model_escape(text + offset, length, &expected);
        string_text(&actual, (const char *)text + offset, length);
        assert_int_equal(actual.length, expected.length);
        assert_memory_equal(actual.data, expected.data, expected.length);
    }
    hf_buffer_free(&actual);
    hf_buffer_free(&expected);
}

/* Keys, strings and times in one object, after other values: commas and colons in place. */
static void test_json_object_members(void **state) {
    (void)state;
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    hf_json_t json;
    hf_json_init(&json, &buffer);
    hf_json_object_begin(&json);
    hf_json_key(&json, "id");
    hf_json_string(&json, "x\"y");
    hf_json_key(&json, "at");
    hf_json_time(&json, 0);
    hf_json_key(&json, "list");
    hf_json_array_begin(&json);
    hf_json_time(&json, 1795291200000);
    hf_json_string(&json, "");
    hf_json_array_end(&json);
    hf_json_key(&json, "k\n");
    hf_json_null(&json);
    HF_JSON_KEY(&json, "quoted_key");
    hf_json_int(&json, 7);
    HF_JSON_KEY(&json, "nested");
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "a");
    hf_json_bool(&json, true);
    HF_JSON_KEY(&json, "b");
    hf_json_string(&json, "c");
    hf_json_object_end(&json);
    hf_json_object_end(&json);
    assert_string_equal(buffer.data, "{\"id\":\"x\\\"y\",\"at\":\"1970-01-01T00:00:00.000Z\","
                                     "\"list\":[\"2026-11-21T20:00:00.000Z\",\"\"],"
                                     "\"k\\n\":null,\"quoted_key\":7,"
                                     "\"nested\":{\"a\":true,\"b\":\"c\"}}");
    hf_buffer_free(&buffer);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_string_plain),  cmocka_unit_test(test_json_string_escapes),
        cmocka_unit_test(test_json_string_utf8),   cmocka_unit_test(test_json_string_invalid_utf8),
        cmocka_unit_test(test_json_string_long),   cmocka_unit_test(test_json_plain_length),
        cmocka_unit_test(test_json_string_random), cmocka_unit_test(test_json_object_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
