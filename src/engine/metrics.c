/* The counters of GET /metrics and the writer of the text format (metrics.h). */
#include "engine/metrics.h"

#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every status the server or a handler answers, in the order a scrape lists them; the last
 * slot, past these, is "other". */
static const int COUNTED_STATUSES[] = {
    200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 408, 409, 410, 411,
    412, 413, 414, 415, 416, 417, 422, 426, 428, 429, 431, 500, 501, 502, 503, 504, 505,
};
#define COUNTED_STATUS_COUNT (sizeof COUNTED_STATUSES / sizeof COUNTED_STATUSES[0])
#define STATUS_OTHER_SLOT (HF_METRICS_STATUS_SLOTS - 1)
_Static_assert(COUNTED_STATUS_COUNT == STATUS_OTHER_SLOT, "one slot per status, then other");

/* "/v1/events/{}/seats/{}" as "/v1/events/{event}/seats/{seat}": a captured segment is named
 * after the collection before it, in the singular ("{id}" when that is no plural). */
static void route_name_make(const char *pattern, char *out, size_t size) {
    size_t length = 0;
    const char *segment = pattern; /* start of the segment before the one being copied */
    const char *previous = NULL;
    size_t previous_length = 0;
    for (const char *at = pattern; *at && length + 1 < size; at++) {
        if (*at == '/') {
            previous = segment;
            previous_length = (size_t)(at - segment);
            segment = at + 1;
        }
        if (at[0] == '{' && at[1] == '}') {
            bool plural = previous && previous_length > 1 && previous[previous_length - 1] == 's';
            size_t name_length = plural ? previous_length - 1 : 2;
            const char *name = plural ? previous : "id";
            if (length + name_length + 3 >= size) break;
            out[length++] = '{';
            memcpy(out + length, name, name_length);
            length += name_length;
            out[length++] = '}';
            at++;
            continue;
        }
        out[length++] = *at;
    }
    out[length] = '\0';
}

void hf_metrics_init(hf_metrics_t *metrics, const hf_route_t *const *routes, size_t route_count,
                     const char *version, int64_t now_ms) {
    assert(route_count <= HF_ROUTES_MAX);
    memset(metrics, 0, sizeof *metrics);
    memset(metrics->status_slots, STATUS_OTHER_SLOT, sizeof metrics->status_slots);
    for (size_t i = 0; i < COUNTED_STATUS_COUNT; i++)
        metrics->status_slots[COUNTED_STATUSES[i]] = (uint8_t)i;
    metrics->routes = routes;
    metrics->route_count = route_count;
    snprintf(metrics->route_names[0], HF_METRICS_ROUTE_NAME_SIZE, "other");
    for (size_t i = 0; i < route_count; i++)
        route_name_make(routes[i]->pattern, metrics->route_names[i + 1],
                        HF_METRICS_ROUTE_NAME_SIZE);
    metrics->version = version;
    metrics->started_at_ms = now_ms;
}

/* On every answer: two array increments and a histogram's few compares. */
void hf_metrics_answered(void *context, uint32_t label, int status, uint64_t duration_ns) {
    hf_metrics_t *metrics = ((hf_context_t *)context)->metrics;
    if (label >= HF_METRICS_ROUTE_SLOTS) label = 0;
    uint8_t slot = status >= 0 && status < 600 ? metrics->status_slots[status] : STATUS_OTHER_SLOT;
    metrics->requests[label][slot]++;
    hf_histogram_record(&metrics->durations[label], &hf_histogram_seconds_bounds, duration_ns);
}

uint64_t hf_metrics_route_answers(const hf_metrics_t *metrics, hf_route_handler_fn route,
                                  int status) {
    if (status < 0 || status >= 600) return 0;
    for (size_t i = 0; i < metrics->route_count; i++)
        if (metrics->routes[i]->handler == route)
            return metrics->requests[i + 1][metrics->status_slots[status]];
    return 0;
}

/* ---- the text format ---- */

/* A label value with backslash, double quote and line feed escaped. */
static void label_value_write(hf_buffer_t *out, const char *value) {
    for (const char *at = value; *at; at++) {
        if (*at == '\\') HF_BUFFER_APPEND_LITERAL(out, "\\\\");
        else if (*at == '"') HF_BUFFER_APPEND_LITERAL(out, "\\\"");
        else if (*at == '\n') HF_BUFFER_APPEND_LITERAL(out, "\\n");
        else hf_buffer_append_char(out, *at);
    }
}

/* {a="1",b="2",extra="value"}, or nothing without labels; extra may be NULL. */
static void labels_write(hf_buffer_t *out, const hf_metrics_label_t *labels, size_t count,
                         const hf_metrics_label_t *extra) {
    if (count == 0 && !extra) return;
    hf_buffer_append_char(out, '{');
    for (size_t i = 0; i < count + (extra != NULL); i++) {
        const hf_metrics_label_t *label = i < count ? &labels[i] : extra;
        if (i) hf_buffer_append_char(out, ',');
        hf_buffer_append_string(out, label->name);
        HF_BUFFER_APPEND_LITERAL(out, "=\"");
        label_value_write(out, label->value);
        hf_buffer_append_char(out, '"');
    }
    hf_buffer_append_char(out, '}');
}

/* Integers as integers (counts are exact up to 2^53), anything else in the fewest digits
 * that read back as the same double ("0.000675099", not "0.00067509900000000008"). */
static void value_write(hf_buffer_t *out, double value) {
    if (value == (double)(int64_t)value && value > -9007199254740992.0 &&
        value < 9007199254740992.0) {
        hf_buffer_printf(out, " %" PRId64 "\n", (int64_t)value);
        return;
    }
    char text[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strtod(text, NULL) == value) break;
    }
    hf_buffer_printf(out, " %s\n", text);
}

void hf_metrics_family(hf_buffer_t *out, const char *name, const char *type, const char *help) {
    hf_buffer_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void hf_metrics_sample(hf_buffer_t *out, const char *name, const hf_metrics_label_t *labels,
                       size_t label_count, double value) {
    hf_buffer_append_string(out, name);
    labels_write(out, labels, label_count, NULL);
    value_write(out, value);
}

void hf_metrics_histogram(hf_buffer_t *out, const char *name, const hf_metrics_label_t *labels,
                          size_t label_count, const hf_histogram_t *histogram,
                          const hf_histogram_bounds_t *bounds) {
    uint64_t cumulative = 0;
    char bound[32];
    for (size_t i = 0; i <= bounds->count; i++) {
        cumulative += histogram->counts[i];
        if (i < bounds->count)
            snprintf(bound, sizeof bound, "%g", (double)bounds->upper[i] * bounds->unit_scale);
        else snprintf(bound, sizeof bound, "+Inf");
        hf_metrics_label_t le = {"le", bound};
        hf_buffer_printf(out, "%s_bucket", name);
        labels_write(out, labels, label_count, &le);
        value_write(out, (double)cumulative);
    }
    hf_buffer_printf(out, "%s_sum", name);
    labels_write(out, labels, label_count, NULL);
    value_write(out, (double)histogram->sum * bounds->unit_scale);
    hf_buffer_printf(out, "%s_count", name);
    labels_write(out, labels, label_count, NULL);
    value_write(out, (double)histogram->count);
}
