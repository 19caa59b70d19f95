/* Dates and RFC 3339 instants to steps and back (spans.h). The day count of a civil date is
 * computed in 400-year eras (146,097 days each), with March as the year's first month so that
 * a leap day falls at a year's end. */
#include "lib/spans.h"

#include <stdbool.h>
#include <string.h>

#define DAYS_PER_ERA 146097
#define MINUTES_PER_DAY 1440
/* 0000-03-01 to 1970-01-01. */
#define DAYS_BEFORE_EPOCH 719468
#define YEAR_MAX 9999

/* Reads exactly count digits at text into *value; false on any other byte. */
static bool digits(const char *text, int count, int *value) {
    int result = 0;
    for (int i = 0; i < count; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        result = result * 10 + (text[i] - '0');
    }
    *value = result;
    return true;
}

static bool leap_year(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

static int month_days(int year, int month) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && leap_year(year) ? 29 : days[month - 1];
}

/* Days since 1970-01-01 of a valid civil date (year 0 to 9999). */
static int64_t days_from_civil(int year, int month, int day) {
    int64_t y = month <= 2 ? year - 1 : year;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t year_of_era = y - era * 400;
    int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * DAYS_PER_ERA + day_of_era - DAYS_BEFORE_EPOCH;
}

static void civil_from_days(int64_t days, int *year, int *month, int *day) {
    days += DAYS_BEFORE_EPOCH;
    int64_t era = (days >= 0 ? days : days - DAYS_PER_ERA + 1) / DAYS_PER_ERA;
    int64_t day_of_era = days - era * DAYS_PER_ERA;
    int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    int64_t shifted_month = (5 * day_of_year + 2) / 153;
    *day = (int)(day_of_year - (153 * shifted_month + 2) / 5 + 1);
    *month = (int)(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
    *year = (int)(year_of_era + era * 400 + (*month <= 2 ? 1 : 0));
}

/* "YYYY-MM-DD" at text (ten bytes there) into a day count; false when malformed. */
static bool civil_date(const char *text, int64_t *days) {
    int year, month, day;
    if (!digits(text, 4, &year) || text[4] != '-' || !digits(text + 5, 2, &month) ||
        text[7] != '-' || !digits(text + 8, 2, &day))
        return false;
    if (month < 1 || month > 12 || day < 1 || day > month_days(year, month)) return false;
    *days = days_from_civil(year, month, day);
    return true;
}

#define DATE_LENGTH 10

hf_span_parse_t hf_span_date_parse(const char *text, size_t length, int32_t *day) {
    int64_t days;
    if (length != DATE_LENGTH || !civil_date(text, &days)) return HF_SPAN_MALFORMED;
    if (days < 0) return HF_SPAN_OUT_OF_RANGE;
    *day = (int32_t)days;
    return HF_SPAN_PARSED;
}

/* "HH:MM:SS" at text into minutes of the day and seconds; false when malformed. */
static bool clock_time(const char *text, int *minutes, int *seconds) {
    int hour, minute;
    if (!digits(text, 2, &hour) || text[2] != ':' || !digits(text + 3, 2, &minute) ||
        text[5] != ':' || !digits(text + 6, 2, seconds))
        return false;
    /* 60: a leap second, which RFC 3339 allows and which is never on a minute's grid. */
    if (hour > 23 || minute > 59 || *seconds > 60) return false;
    *minutes = hour * 60 + minute;
    return true;
}

/* The offset at text (to end): "Z", "z" or "+HH:MM" / "-HH:MM", in minutes east of UTC. */
static bool utc_offset(const char *text, const char *end, int *offset) {
    if (end - text == 1 && (*text == 'Z' || *text == 'z')) {
        *offset = 0;
        return true;
    }
    int hours, minutes;
    if (end - text != 6 || (*text != '+' && *text != '-') || !digits(text + 1, 2, &hours) ||
        text[3] != ':' || !digits(text + 4, 2, &minutes) || hours > 23 || minutes > 59)
        return false;
    *offset = (*text == '-' ? -1 : 1) * (hours * 60 + minutes);
    return true;
}

/* "YYYY-MM-DDTHH:MM:SS" is nineteen bytes; a fraction and the offset follow. */
#define DATE_TIME_LENGTH 19

hf_span_parse_t hf_span_instant_parse(const char *text, size_t length, int32_t *minute) {
    int64_t days;
    int minutes, seconds, offset;
    if (length <= DATE_TIME_LENGTH || !civil_date(text, &days) ||
        (text[DATE_LENGTH] != 'T' && text[DATE_LENGTH] != 't') ||
        !clock_time(text + DATE_LENGTH + 1, &minutes, &seconds))
        return HF_SPAN_MALFORMED;
    const char *at = text + DATE_TIME_LENGTH, *end = text + length;
    bool fraction_zero = true;
    if (*at == '.') {
        const char *first = ++at;
        for (; at < end && *at >= '0' && *at <= '9'; at++)
            if (*at != '0') fraction_zero = false;
        if (at == first) return HF_SPAN_MALFORMED;
    }
    if (at == end || !utc_offset(at, end, &offset)) return HF_SPAN_MALFORMED;
    if (seconds != 0 || !fraction_zero) return HF_SPAN_MISALIGNED;
    int64_t total = days * MINUTES_PER_DAY + minutes - offset;
    if (total < 0) return HF_SPAN_OUT_OF_RANGE;
    if (total > INT32_MAX) return HF_SPAN_OUT_OF_RANGE;
    *minute = (int32_t)total;
    return HF_SPAN_PARSED;
}

/* value's last count digits at out (value >= 0). */
static void put_digits(char *out, int value, int count) {
    for (int i = count - 1; i >= 0; i--) {
        out[i] = (char)('0' + value % 10);
        value /= 10;
    }
}

/* "YYYY-MM-DD" at out, ten bytes, no NUL. */
static void put_date(char *out, int64_t days) {
    int year, month, day;
    civil_from_days(days, &year, &month, &day);
    put_digits(out, year > YEAR_MAX ? YEAR_MAX : year, 4);
    out[4] = '-';
    put_digits(out + 5, month, 2);
    out[7] = '-';
    put_digits(out + 8, day, 2);
}

void hf_span_date_format(int32_t day, char out[HF_SPAN_DATE_SIZE]) {
    put_date(out, day);
    out[DATE_LENGTH] = '\0';
}

void hf_span_instant_format(int32_t minute, char out[HF_SPAN_INSTANT_SIZE]) {
    put_date(out, minute / MINUTES_PER_DAY);
    int of_day = minute % MINUTES_PER_DAY;
    out[DATE_LENGTH] = 'T';
    put_digits(out + 11, of_day / 60, 2);
    out[13] = ':';
    put_digits(out + 14, of_day % 60, 2);
    memcpy(out + 16, ":00.000Z", sizeof ":00.000Z");
}

int32_t hf_span_day_of(int64_t unix_ms) {
    int64_t day_ms = (int64_t)MINUTES_PER_DAY * 60000;
    int64_t days = unix_ms / day_ms - (unix_ms % day_ms < 0 ? 1 : 0);
    return (int32_t)days;
}
