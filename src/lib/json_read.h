/* Small readers of values jansson parsed, shared by the engine's decoder of request bodies and
 * the store's reader of its own rows, so that both read a number the same way. Header-only:
 * each is a few lines on a path that reads every member of a body. */
#ifndef HF_JSON_READ_H
#define HF_JSON_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* *value = the member when it is a JSON integer from minimum to maximum; false otherwise
 * (absent, another type, out of range), *value untouched. */
static inline bool hf_json_read_integer(json_t *member, int64_t minimum, int64_t maximum,
                                        int64_t *value) {
    if (!json_is_integer(member)) return false;
    json_int_t number = json_integer_value(member);
    if (number < minimum || number > maximum) return false;
    *value = number;
    return true;
}

#endif
