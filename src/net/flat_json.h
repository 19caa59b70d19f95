/* A reader for the JSON bodies of the hot routes (a hold, its release, commit and extension),
 * without allocation and without a DOM.
 *
 * jansson stays the parser of record: strict (duplicate names, UTF-8, depth), with its error
 * messages. This reader takes only a plain subset of JSON: one object whose members are
 * strings of printable ASCII without escapes, numbers without an exponent, true, false, null,
 * arrays of such strings, or arrays of objects whose members are such scalars (a calendar
 * hold's items). On anything else it declines (returns false) without judging,
 * and the caller hands the body to jansson. So it never refuses a body jansson would accept,
 * and what it accepts it reads as jansson would (tests/unit/test_flat_json.c and
 * tests/fuzz/fuzz_flat_json.c compare the two). A body of the hot routes is read in a few
 * hundred instructions instead of jansson's nine thousand. */
#ifndef HF_NET_FLAT_JSON_H
#define HF_NET_FLAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longer bodies go to jansson: the hot routes' bodies are a hundred bytes or so, and the copy
 * of the strings (flat.text) has to fit. */
#define HF_FLAT_JSON_SIZE_MAX 2048
/* More members than this, or more array items in all: jansson. A hold has at most six known
 * members; the items bound covers a hold of several dozen seats. */
#define HF_FLAT_JSON_MEMBERS_MAX 16
#define HF_FLAT_JSON_ITEMS_MAX 64
/* Objects in arrays, and their members in all: a calendar hold has up to ten items of three
 * or four members by default; a longer list goes to jansson. */
#define HF_FLAT_JSON_OBJECTS_MAX 16
#define HF_FLAT_JSON_OBJECT_MEMBERS_MAX 48
/* Integers of up to 18 digits cannot overflow int64_t, and decimals of up to 24 characters
 * cannot overflow a double: longer numbers are left to jansson, which has the errors. */
#define HF_FLAT_JSON_INTEGER_DIGITS_MAX 18
#define HF_FLAT_JSON_REAL_SIZE_MAX 24

typedef enum hf_flat_json_kind {
    HF_FLAT_JSON_NULL,
    HF_FLAT_JSON_FALSE,
    HF_FLAT_JSON_TRUE,
    HF_FLAT_JSON_INTEGER, /* no fraction: jansson's integer */
    HF_FLAT_JSON_REAL,    /* with a fraction: jansson's real */
    HF_FLAT_JSON_STRING,
    HF_FLAT_JSON_STRINGS, /* an array of strings (maybe empty) */
    HF_FLAT_JSON_OBJECTS, /* a non-empty array of objects of scalar members */
} hf_flat_json_kind_t;

typedef struct hf_flat_json_member {
    const char *name; /* NUL-terminated, in the reader's text */
    hf_flat_json_kind_t kind;
    const char *string;  /* STRING: NUL-terminated, in the reader's text */
    size_t length;       /* STRING: bytes; STRINGS and OBJECTS: how many items */
    int64_t integer;     /* INTEGER */
    double real;         /* INTEGER and REAL: the value as a double, as json_number_value */
    uint32_t first_item; /* STRINGS: index of its first item in items; OBJECTS: in objects */
} hf_flat_json_member_t;

/* An object in an array: its members are object_members[first_member ..+ member_count). */
typedef struct hf_flat_json_object {
    uint32_t first_member;
    uint32_t member_count;
} hf_flat_json_object_t;

typedef struct hf_flat_json {
    uint32_t member_count;
    hf_flat_json_member_t members[HF_FLAT_JSON_MEMBERS_MAX];
    uint32_t item_count;
    const char *items[HF_FLAT_JSON_ITEMS_MAX]; /* NUL-terminated, in text */
    size_t item_lengths[HF_FLAT_JSON_ITEMS_MAX];
    uint32_t object_count;
    hf_flat_json_object_t objects[HF_FLAT_JSON_OBJECTS_MAX];
    uint32_t object_member_count;
    hf_flat_json_member_t object_members[HF_FLAT_JSON_OBJECT_MEMBERS_MAX];
    /* Names and strings, each copied with a NUL: two quotes in the body make room for it. */
    char text[HF_FLAT_JSON_SIZE_MAX];
} hf_flat_json_t;

/* Reads body[0..length) into flat. True when the body is an object of the subset above with
 * unique member names; false (flat then undefined) for anything else, valid JSON or not. The
 * pointers in flat point into flat itself and stay valid until it is read into again. */
bool hf_flat_json_read(hf_flat_json_t *flat, const char *body, size_t length);

/* The member called name, or NULL when the object has none. Borrowed from flat. */
const hf_flat_json_member_t *hf_flat_json_member(const hf_flat_json_t *flat, const char *name);

/* The member called name of objects[object] (an OBJECTS member's item: first_item + i), or
 * NULL when that object has none. Borrowed from flat. */
const hf_flat_json_member_t *hf_flat_json_object_member(const hf_flat_json_t *flat, uint32_t object,
                                                        const char *name);

#endif
