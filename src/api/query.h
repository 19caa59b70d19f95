/* Percent-decoding of path segments and query strings (application/x-www-form-urlencoded
 * values), and query parameters by name. Pure functions: no state.
 *
 * Ownership: the caller owns out; text and query are borrowed for the call. */
#ifndef HF_API_QUERY_H
#define HF_API_QUERY_H

#include <stdbool.h>
#include <stddef.h>

/* Percent-decodes length bytes of text into out (NUL-terminated); '+' stays '+' (paths)
 * unless plus_is_space. False when out is too small, or on a NUL byte or a bad escape: no id
 * or user may contain one. */
bool hf_query_percent_decode(const char *text, size_t length, char *out, size_t out_size,
                             bool plus_is_space);
/* Query string value by name, percent-decoded into out; false when absent or not decodable.
 * A name without '=' has the empty value. */
bool hf_query_get(const char *query, const char *name, char *out, size_t out_size);
/* Whether the query string names the parameter at all (with a value or without), so that a
 * value hf_query_get cannot decode is told from an absent one. */
bool hf_query_has(const char *query, const char *name);

#endif
