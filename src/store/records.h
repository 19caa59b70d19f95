/* The store's table of record kinds: one row for each kind of core/mutation.h's list
 * (HF_RECORD_KINDS), holding what the store does with a record of that kind whatever the
 * backend: its name in messages, the unit it is fenced on (store.h's hf_store_record_unit), the
 * id that names it in an error, its deep copy into a batch (batch.c) and its entry in its
 * event's audit history (history.c). The rows are in records.c; the table is made from the
 * list itself, so a kind without its row fails to compile.
 *
 * What differs per backend (the SQL that writes a record) is each backend's own table of
 * writes, indexed by kind and made from the list in the same way (sqlite/sqlite.c,
 * postgres/postgres.c): no switch on the kinds anywhere else. Private to src/store. */
#ifndef HF_STORE_RECORDS_H
#define HF_STORE_RECORDS_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mutation.h"
#include "lib/json.h"
#include "store/store.h"

typedef struct hf_record_row {
    const char *name; /* the kind in messages: "HOLD_CREATE" */
    /* Where the record names its unit, the event or fleet it belongs to: the offset of a
     * const char * in hf_mutation_t. The entry a record makes in the audit history is that
     * event's. unit_or_none: a NULL or empty one is HF_STORE_UNIT_NONE (store.h). */
    size_t unit;
    bool unit_or_none;
    /* Where the id an operator would look up is (offsets as unit's); subject_else, when not
     * 0, where it is when that one is NULL. */
    size_t subject, subject_else;
    /* Replaces every pointer of the record (a shallow copy of the emitted one) by a copy in
     * the batch's memory. */
    void (*copy)(hf_batch_t *batch, hf_mutation_t *record);
    /* Its audit history entry (history.h): the entry's type word, NULL when this record makes
     * none, and the entry's data (the members of its JSON object). Both NULL for a kind that
     * never makes an entry. */
    const char *(*history_type)(const hf_mutation_t *record);
    void (*history_data)(hf_json_t *json, const hf_mutation_t *record);
} hf_record_row_t;

/* Indexed by kind; the numbers between kinds have empty rows (name NULL). */
extern const hf_record_row_t hf_record_rows[HF_RECORD_KIND_LIMIT];

/* The row of a kind of the list (asserted). */
static inline const hf_record_row_t *hf_record_row(hf_mutation_type_t type) {
    assert((size_t)type < HF_RECORD_KIND_LIMIT && hf_record_rows[type].name != NULL);
    return &hf_record_rows[type];
}

/* The string field at offset (a row's unit or subject) of the record, borrowed from it. */
static inline const char *hf_record_text(const hf_mutation_t *record, size_t offset) {
    return *(const char *const *)(const void *)((const char *)record + offset);
}

/* The kind's name for a message, "unknown" for a number no kind has. */
static inline const char *hf_record_name(int type) {
    bool known = type >= 0 && (size_t)type < HF_RECORD_KIND_LIMIT && hf_record_rows[type].name;
    return known ? hf_record_rows[type].name : "unknown";
}

/* The word a status column stores for value, by the core's name function (core/names.c and
 * the domains' own), whose last value is last; NULL for a value out of range, which a backend
 * writes as SQL NULL so that the column's NOT NULL fails the batch by name. */
static inline const char *hf_record_word(const char *(*name)(uint8_t), int value, int last) {
    return value >= 0 && value <= last ? name((uint8_t)value) : NULL;
}

/* The id that names the record in an error message (NULL when it has none), borrowed. */
const char *hf_record_subject(const hf_mutation_t *record);

/* ---- The rows' functions, each in the file of its concern ---- */

/* The copies (batch.c), one per union member: hf_batch_copy_MEMBER. */
#define HF_RECORD_COPY_DECLARE_(KIND, value, name, member) \
    void hf_batch_copy_##member(hf_batch_t *batch, hf_mutation_t *record);
HF_RECORD_KINDS(HF_RECORD_COPY_DECLARE_)

/* The kinds that make history entries (history.c): hf_history_type_NAME, hf_history_data_NAME. */
#define HF_RECORD_HISTORY_DECLARE_(name) \
    const char *hf_history_type_##name(const hf_mutation_t *record); \
    void hf_history_data_##name(hf_json_t *json, const hf_mutation_t *record);
HF_RECORD_HISTORY_DECLARE_(hold_create)
HF_RECORD_HISTORY_DECLARE_(hold_update)
HF_RECORD_HISTORY_DECLARE_(order_create)
HF_RECORD_HISTORY_DECLARE_(order_update)
HF_RECORD_HISTORY_DECLARE_(delivery)
HF_RECORD_HISTORY_DECLARE_(event_update)
HF_RECORD_HISTORY_DECLARE_(allocation)
HF_RECORD_HISTORY_DECLARE_(event_cancel)
HF_RECORD_HISTORY_DECLARE_(job)
HF_RECORD_HISTORY_DECLARE_(waitlist)

#endif
