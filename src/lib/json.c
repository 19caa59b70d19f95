/* The JSON writer (lib/json.h). */
#include "lib/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hf_json_init(hf_json_t *json, hf_buffer_t *out) {
    memset(json, 0, sizeof *json);
    json->out = out;
}

static void open_container(hf_json_t *json, char c) {
    hf_json_separator_write(json);
    hf_buffer_append_char(json->out, c);
    if (json->depth >= HF_JSON_NESTING_MAX) abort(); /* programmer error: fixed shapes only */
    json->need_comma[json->depth++] = false;
}

static void close_container(hf_json_t *json, char c) {
    json->depth--;
    hf_buffer_append_char(json->out, c);
}

void hf_json_object_begin(hf_json_t *json) { open_container(json, '{'); }
void hf_json_object_end(hf_json_t *json) { close_container(json, '}'); }
void hf_json_array_begin(hf_json_t *json) { open_container(json, '['); }
void hf_json_array_end(hf_json_t *json) { close_container(json, ']'); }

/* Length of the valid UTF-8 sequence at text (1 to 4), or 0 when it is not valid: overlong
 * forms, surrogates and code points above U+10FFFF are invalid too. */
static size_t utf8_sequence(const unsigned char *text, size_t available) {
    unsigned char c = text[0];
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (length == 0 || c >= 0xf5 || c == 0xc0 || c == 0xc1 || length > available) return 0;
    for (size_t i = 1; i < length; i++)
        if ((text[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && text[1] < 0xa0) return 0;  /* overlong */
    if (c == 0xed && text[1] >= 0xa0) return 0; /* surrogate */
    if (c == 0xf0 && text[1] < 0x90) return 0;  /* overlong */
    if (c == 0xf4 && text[1] >= 0x90) return 0; /* above U+10FFFF */
    return length;
}

/* Bytes a JSON string cannot carry as they are: control characters, the quote, the backslash,
 * and every byte of a multi-byte UTF-8 sequence (checked, then copied). The test is done eight
 * bytes at a time where the byte order allows it (word_care_marks), one byte at a time
 * elsewhere (needs_care). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WORD_AT_A_TIME 1
#else
#define WORD_AT_A_TIME 0
#endif

#if !WORD_AT_A_TIME
static bool needs_care(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }
#else
#define WORD_ONES UINT64_C(0x0101010101010101)
#define WORD_HIGH_BITS UINT64_C(0x8080808080808080)

/* The high bit of each byte of word that needs care, eight bytes at once. Each test is the
 * classic "has a byte below n" trick: a byte below n borrows and sets its high bit. A borrow can
 * also mark a byte above a real match, never one below it, so the lowest mark is exact; that is
 * the only one the caller uses. */
static uint64_t word_care_marks(uint64_t word) {
    uint64_t below_space = word - WORD_ONES * 0x20;
    uint64_t quote = (word ^ (WORD_ONES * '"')) - WORD_ONES;
    uint64_t backslash = (word ^ (WORD_ONES * '\\')) - WORD_ONES;
    return (((below_space | quote | backslash) & ~word) | word) & WORD_HIGH_BITS;
}

/* The count (1 to 7) bytes at from as the low bytes of a word, little-endian, the rest filled
 * with a plain byte: three loads instead of a loop, and no read past the string. */
static uint64_t load_short(const unsigned char *from, size_t count) {
    uint64_t word = (WORD_ONES * 'a') << (8 * count);
    size_t at = 0;
    if (count & 4) {
        uint32_t part;
        memcpy(&part, from, sizeof part);
        word |= part;
        at = 4;
    }
    if (count & 2) {
        uint16_t part;
        memcpy(&part, from + at, sizeof part);
        word |= (uint64_t)part << (8 * at);
        at += 2;
    }
    if (count & 1) word |= (uint64_t)from[at] << (8 * at);
    return word;
}

#endif

size_t hf_json_plain_length(const char *text, size_t length) {
    const unsigned char *from = (const unsigned char *)text;
    size_t done = 0;
#if WORD_AT_A_TIME
    /* Most strings are plain, so whole words are tested at once. The word test needs the
     * lowest address in the lowest byte; elsewhere a byte loop does the job. */
    uint64_t word;
    while (length - done >= sizeof word) {
        memcpy(&word, from + done, sizeof word);
        uint64_t marks = word_care_marks(word);
        if (marks != 0) return done + (size_t)__builtin_ctzll(marks) / 8;
        done += sizeof word;
    }
    size_t rest = length - done;
    if (rest == 0) return done;
    uint64_t marks = word_care_marks(load_short(from + done, rest));
    /* The filler is plain and sits above the string's bytes, so any mark is a real one. */
    return marks != 0 ? done + (size_t)__builtin_ctzll(marks) / 8 : length;
#else
    while (done < length && !needs_care(from[done])) done++;
    return done;
#endif
}

/* Writes the escaped form of the byte (or UTF-8 sequence) at from, which needs care, and
 * returns how many input bytes it took. */
static size_t write_cared(const unsigned char *from, size_t available, char **to) {
    static const char hex[] = "0123456789abcdef";
    unsigned char c = from[0];
    char *at = *to;
    size_t taken = 1;
    if (c >= 0x80) {
        size_t sequence = utf8_sequence(from, available);
        if (sequence > 0) {
            memcpy(at, from, sequence);
            at += sequence;
            taken = sequence;
        } else {
            memcpy(at, "\\ufffd", 6);
            at += 6;
        }
        *to = at;
        return taken;
    }
    *at++ = '\\';
    switch (c) {
    case '"': *at++ = '"'; break;
    case '\\': *at++ = '\\'; break;
    case '\n': *at++ = 'n'; break;
    case '\r': *at++ = 'r'; break;
    case '\t': *at++ = 't'; break;
    default:
        memcpy(at, "u00", 3);
        at[3] = hex[c >> 4];
        at[4] = hex[c & 15];
        at += 5;
    }
    *to = at;
    return taken;
}

/* Escapes text as a JSON string, followed by the colon when it is a key. Bytes that are not
 * valid UTF-8 (an error message quoting a client's broken input, say) become U+FFFD, so no
 * answer is ever invalid JSON text. Room for the worst case (every byte escaped to six, two
 * quotes and a colon) is made once, so the loop
 * writes straight into the buffer: this runs for every key and string of every answer. */
static void write_escaped(hf_buffer_t *out, const char *text, size_t length, bool key) {
    const unsigned char *bytes = (const unsigned char *)text;
    hf_buffer_reserve(out, 6 * length + 3);
    char *to = out->data + out->length;
    *to++ = '"';
    size_t i = 0;
    for (;;) {
        size_t plain = hf_json_plain_length(text + i, length - i);
        memcpy(to, bytes + i, plain);
        to += plain;
        i += plain;
        if (i == length) break;
        i += write_cared(bytes + i, length - i, &to);
    }
    *to++ = '"';
    if (key) *to++ = ':';
    *to = '\0';
    out->length = (size_t)(to - out->data);
}

void hf_json_key(hf_json_t *json, const char *key) {
    hf_json_separator_write(json);
    write_escaped(json->out, key, strlen(key), true);
    json->after_key = true;
}

void hf_json_string_length(hf_json_t *json, const char *text, size_t length) {
    hf_json_separator_write(json);
    write_escaped(json->out, text, length, false);
}

void hf_json_string(hf_json_t *json, const char *text) {
    hf_json_string_length(json, text, strlen(text));
}

/* Longest decimal int64_t: "-9223372036854775808" is 20 characters. */
#define INT64_DIGITS_MAX 20

/* Writes value in decimal at out (room for INT64_DIGITS_MAX characters, no NUL) and returns the
 * length. The JSON writer runs on the event-loop thread for every response, and the printf
 * family showed up in its profile, so the digits are produced here by hand. The magnitude is
 * taken as unsigned because negating INT64_MIN in int64_t would overflow. */
static size_t format_int(int64_t value, char *out) {
    char reversed[INT64_DIGITS_MAX];
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    size_t count = 0;
    do {
        reversed[count++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    size_t length = 0;
    if (value < 0) out[length++] = '-';
    while (count > 0) out[length++] = reversed[--count];
    return length;
}

void hf_json_int(hf_json_t *json, int64_t value) {
    hf_json_separator_write(json);
    char digits[INT64_DIGITS_MAX];
    size_t length = format_int(value, digits);
    hf_buffer_append(json->out, digits, length);
}

/* A value within a rounding of n / 10^6 for a whole n: six decimals at most. Below
 * DECIMAL_SCALED_MAX, n has at most 15 digits, which a double keeps (DBL_DIG): "%.15g" writes
 * exactly n's digits then, trailing zeros removed. From DECIMAL_SCALED_MIN on, it writes them
 * without an exponent (below 0.0001 "%g" takes one). */
#define DECIMAL_UNIT 1000000
#define DECIMAL_SCALE 1e6
#define DECIMAL_SCALED_MIN 100
#define DECIMAL_SCALED_MAX 1000000000000000LL

/* n / 10^6 written as "%.15g" writes it, when value is the double nearest to it; false when it
 * is not (more decimals, an exponent, -0): the caller asks printf then. */
static bool decimal_fast(double value, char *out, size_t *length) {
    double scaled = value * DECIMAL_SCALE;
    if (!(scaled > -(double)DECIMAL_SCALED_MAX && scaled < (double)DECIMAL_SCALED_MAX))
        return false;
    /* The product is within a quarter of a unit of n below DECIMAL_SCALED_MAX: rounding it
     * gives n, and the check below refuses a value that is no such quotient. */
    int64_t whole = (int64_t)(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
    int64_t magnitude = whole < 0 ? -whole : whole;
    if (magnitude < DECIMAL_SCALED_MIN || (double)whole / DECIMAL_SCALE != value) return false;
    size_t count = 0;
    if (whole < 0) out[count++] = '-';
    count += format_int(magnitude / DECIMAL_UNIT, out + count);
    int64_t fraction = magnitude % DECIMAL_UNIT;
    if (fraction != 0) {
        out[count++] = '.';
        for (int64_t unit = DECIMAL_UNIT / 10; unit > 0; unit /= 10)
            out[count++] = (char)('0' + fraction / unit % 10);
        while (out[count - 1] == '0') count--;
    }
    *length = count;
    return true;
}

size_t hf_format_decimal(double value, char out[HF_DECIMAL_SIZE]) {
    size_t length;
    if (decimal_fast(value, out, &length)) {
        out[length] = '\0';
        return length;
    }
    return (size_t)snprintf(out, HF_DECIMAL_SIZE, "%.15g", value);
}

void hf_json_decimal(hf_json_t *json, double value) {
    hf_json_separator_write(json);
    char text[HF_DECIMAL_SIZE];
    size_t length = hf_format_decimal(value, text);
    hf_buffer_append(json->out, text, length);
}

void hf_json_bool(hf_json_t *json, bool value) {
    hf_json_separator_write(json);
    hf_buffer_append_string(json->out, value ? "true" : "false");
}

void hf_json_null(hf_json_t *json) {
    hf_json_separator_write(json);
    hf_buffer_append(json->out, "null", 4);
}

void hf_json_seconds(hf_json_t *json, int64_t milliseconds) {
    hf_json_separator_write(json);
    /* Room for the whole seconds, the point and three decimals. */
    char text[INT64_DIGITS_MAX + 4];
    size_t length = format_int(milliseconds / 1000, text);
    int64_t fraction = milliseconds % 1000;
    if (fraction != 0) {
        /* C division truncates toward zero, so the fraction of a negative value is negative and
         * its magnitude is what is written; that keeps the output the printf version gave. As a
         * consequence a value between -1 s and 0 loses its sign (-500 -> 0.5); durations are
         * validated positive before they get here, so that case does not occur. */
        if (fraction < 0) fraction = -fraction;
        text[length++] = '.';
        text[length++] = (char)('0' + fraction / 100);
        text[length++] = (char)('0' + fraction / 10 % 10);
        text[length++] = (char)('0' + fraction % 10);
        /* Three decimals with trailing zeros removed: 1500 -> 1.5. The fraction is not zero, so
         * this stops before reaching the point. */
        while (text[length - 1] == '0') length--;
    }
    hf_buffer_append(json->out, text, length);
}

/* "00" to "99": a time is written two digits at a time, one copy each instead of a division
 * and a store per digit (two times go into every hold answer). */
static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes value (below 100) as two decimal digits at out. */
static void put_two_digits(char *out, uint32_t value) { memcpy(out, two_digits + 2 * value, 2); }

/* The calendar arithmetic below works on days counted from 0000-03-01 rather than from
 * 1970-01-01: with March as the first month the leap day is the last day of a year, so the day
 * within a year does not depend on whether the year is a leap year. The Gregorian calendar
 * repeats exactly every 400 years (146097 days), which splits the problem into a whole number
 * of such cycles plus a position inside one cycle that is never negative. */
#define DAYS_PER_CYCLE 146097
#define DAYS_FROM_0000_03_01_TO_1970_01_01 719468
#define MS_PER_DAY INT64_C(86400000)
/* RFC 3339 only has four-digit years, so the supported range is 0000-01-01T00:00:00.000Z to
 * 9999-12-31T23:59:59.999Z; times outside it are clamped to its ends, which keeps the output
 * well-formed and exactly 24 characters long for every input. */
#define FORMAT_TIME_MIN_MS INT64_C(-62167219200000)
#define FORMAT_TIME_MAX_MS INT64_C(253402300799999)

/* The civil date (proleptic Gregorian) of a day counted from 1970-01-01, which may be negative. */
static void civil_from_days(int64_t days, int64_t *year, uint32_t *month, uint32_t *day) {
    int64_t shifted = days + DAYS_FROM_0000_03_01_TO_1970_01_01;
    /* Floor division: days before 0000-03-01 belong to a cycle with a negative number. */
    int64_t cycle = (shifted >= 0 ? shifted : shifted - (DAYS_PER_CYCLE - 1)) / DAYS_PER_CYCLE;
    uint32_t day_of_cycle = (uint32_t)(shifted - cycle * DAYS_PER_CYCLE); /* 0 .. 146096 */
    /* Taking out the leap days before this day leaves 365 days per year, so dividing by 365
     * gives the year. A leap day ends every 1460 days (four plain years), except at the end of
     * each 36524-day century, except again at the end of the cycle (its last day, 146096). */
    uint32_t year_of_cycle = (day_of_cycle - day_of_cycle / 1460 + day_of_cycle / 36524 -
                              day_of_cycle / 146096) /
                             365; /* 0 .. 399 */
    uint32_t day_of_year = day_of_cycle - (365 * year_of_cycle + year_of_cycle / 4 -
                                           year_of_cycle / 100); /* 0 .. 365, from 1 March */
    /* Month lengths from March to January run 31 30 31 30 31 31 30 31 30 31 31, a pattern that
     * repeats every five months in 153 days, so a linear formula maps a day to its month. */
    uint32_t month_from_march = (5 * day_of_year + 2) / 153; /* 0 = March .. 11 = February */
    *day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    *month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
    /* January and February are the end of the March-based year, so they belong to the next
     * calendar year. */
    *year = cycle * 400 + year_of_cycle + (*month <= 2 ? 1 : 0);
}

/* A time clamped to the supported range, as its day from 1970-01-01 and its millisecond of
 * that day. Floor division, so a time before 1970 falls on the previous day with a positive
 * time of day: -1 is 1969-12-31T23:59:59.999Z. */
static uint32_t split_days(int64_t unix_ms, int64_t *days) {
    if (unix_ms < FORMAT_TIME_MIN_MS) unix_ms = FORMAT_TIME_MIN_MS;
    if (unix_ms > FORMAT_TIME_MAX_MS) unix_ms = FORMAT_TIME_MAX_MS;
    *days = unix_ms / MS_PER_DAY;
    int64_t ms_of_day = unix_ms % MS_PER_DAY;
    if (ms_of_day < 0) {
        ms_of_day += MS_PER_DAY;
        *days -= 1;
    }
    return (uint32_t)ms_of_day; /* below 86400000, fits */
}

void hf_format_time(int64_t unix_ms, char out[32]) {
    int64_t days, year;
    uint32_t ms = split_days(unix_ms, &days);
    uint32_t month, day;
    civil_from_days(days, &year, &month, &day);
    /* Fixed layout: 2026-11-21T20:00:00.000Z */
    memcpy(out, "0000-00-00T00:00:00.000Z", 25);
    put_two_digits(out, (uint32_t)year / 100);
    put_two_digits(out + 2, (uint32_t)year % 100);
    put_two_digits(out + 5, month);
    put_two_digits(out + 8, day);
    put_two_digits(out + 11, ms / 3600000);
    put_two_digits(out + 14, ms / 60000 % 60);
    put_two_digits(out + 17, ms / 1000 % 60);
    out[20] = (char)('0' + ms % 1000 / 100);
    put_two_digits(out + 21, ms % 100);
}

void hf_format_http_date(int64_t unix_ms, char out[HF_HTTP_DATE_SIZE]) {
    static const char weekdays[] = "ThuFriSatSunMonTueWed"; /* 1970-01-01 was a Thursday */
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int64_t days, year;
    uint32_t ms = split_days(unix_ms, &days);
    uint32_t month, day;
    civil_from_days(days, &year, &month, &day);
    int64_t weekday = days % 7;
    if (weekday < 0) weekday += 7;
    /* Fixed layout (RFC 9110 section 5.6.7): Sun, 06 Nov 1994 08:49:37 GMT */
    memcpy(out, "Thu, 01 Jan 1970 00:00:00 GMT", HF_HTTP_DATE_SIZE);
    memcpy(out, weekdays + 3 * weekday, 3);
    put_two_digits(out + 5, day);
    memcpy(out + 8, months + 3 * (month - 1), 3);
    put_two_digits(out + 12, (uint32_t)year / 100);
    put_two_digits(out + 14, (uint32_t)year % 100);
    put_two_digits(out + 17, ms / 3600000);
    put_two_digits(out + 20, ms / 60000 % 60);
    put_two_digits(out + 23, ms / 1000 % 60);
}

/* Length of a formatted time: 2026-11-21T20:00:00.000Z. */
#define TIME_TEXT_LENGTH 24

/* A formatted time is plain ASCII with nothing to escape, so it is written between its quotes
 * directly: every hold answer carries two. */
void hf_json_time(hf_json_t *json, int64_t unix_ms) {
    char text[32];
    hf_format_time(unix_ms, text);
    hf_json_separator_write(json);
    hf_buffer_t *out = json->out;
    hf_buffer_reserve(out, TIME_TEXT_LENGTH + 2);
    char *to = out->data + out->length;
    to[0] = '"';
    memcpy(to + 1, text, TIME_TEXT_LENGTH);
    to[TIME_TEXT_LENGTH + 1] = '"';
    to[TIME_TEXT_LENGTH + 2] = '\0';
    out->length += TIME_TEXT_LENGTH + 2;
}

void hf_json_raw(hf_json_t *json, const char *text, size_t length) {
    hf_json_separator_write(json);
    hf_buffer_append(json->out, text, length);
}

/* ---- reading a time ---- */

/* The day from 1970-01-01 of a civil date: civil_from_days backwards. */
static int64_t days_from_civil(int64_t year, uint32_t month, uint32_t day) {
    year -= month <= 2;
    int64_t cycle = year / 400; /* year >= 1969 here: no floor needed */
    uint32_t year_of_cycle = (uint32_t)(year - cycle * 400);
    uint32_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    uint32_t day_of_cycle = year_of_cycle * 365 + year_of_cycle / 4 - year_of_cycle / 100 +
                            day_of_year;
    return cycle * DAYS_PER_CYCLE + day_of_cycle - DAYS_FROM_0000_03_01_TO_1970_01_01;
}

/* count digits at text as a number; false when one is not a digit. */
static bool digits_read(const char *text, int count, uint32_t *value) {
    *value = 0;
    for (int i = 0; i < count; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        *value = *value * 10 + (uint32_t)(text[i] - '0');
    }
    return true;
}

static bool day_valid(uint32_t year, uint32_t month, uint32_t day) {
    static const uint8_t lengths[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1 || day > lengths[month - 1]) return false;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month != 2 || day < 29 || leap;
}

/* The offset after the seconds and their fraction: "Z" or "+HH:MM" / "-HH:MM", in ms. */
static bool offset_read(const char *text, int64_t *offset_ms) {
    if ((text[0] == 'Z' || text[0] == 'z') && text[1] == '\0') {
        *offset_ms = 0;
        return true;
    }
    uint32_t hours, minutes;
    if ((text[0] != '+' && text[0] != '-') || !digits_read(text + 1, 2, &hours) || text[3] != ':' ||
        !digits_read(text + 4, 2, &minutes) || text[6] != '\0' || hours > 23 || minutes > 59)
        return false;
    *offset_ms = ((int64_t)hours * 60 + minutes) * 60000 * (text[0] == '-' ? -1 : 1);
    return true;
}

bool hf_parse_time(const char *text, int64_t *unix_ms) {
    uint32_t year, month, day, hour, minute, second, ms = 0;
    if (!text || !digits_read(text, 4, &year) || text[4] != '-' ||
        !digits_read(text + 5, 2, &month) || text[7] != '-' || !digits_read(text + 8, 2, &day) ||
        (text[10] != 'T' && text[10] != 't') || !digits_read(text + 11, 2, &hour) ||
        text[13] != ':' || !digits_read(text + 14, 2, &minute) || text[16] != ':' ||
        !digits_read(text + 17, 2, &second))
        return false;
    if (year < 1970 || !day_valid(year, month, day) || hour > 23 || minute > 59 || second > 59)
        return false;
    const char *rest = text + 19;
    if (*rest == '.') {
        int count = 0;
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, count++)
            if (count < 3) ms = ms * 10 + (uint32_t)(*rest - '0');
        if (count == 0) return false;
        for (; count < 3; count++) ms *= 10;
    }
    int64_t offset_ms;
    if (!offset_read(rest, &offset_ms)) return false;
    int64_t days = days_from_civil(year, month, day);
    *unix_ms = days * MS_PER_DAY + ((int64_t)hour * 3600 + minute * 60 + second) * 1000 + ms -
               offset_ms;
    return *unix_ms >= 0;
}
