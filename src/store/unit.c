/* The units of a batch (store.h): which events or fleets its records write for, so a backend with
 * leases can fence a batch on exactly the units it touches. Each record's unit is its kind's row
 * (records.c). Pure: no I/O. */
#include <string.h>

#include "store/store.h"

/* A batch touches few units (usually one or two events), so a linear search of what is
 * already collected costs less than a map. */
size_t hf_store_batch_units(const hf_batch_t *batch, const char **units, size_t capacity) {
    size_t count = 0;
    for (size_t i = 0; i < hf_batch_count(batch); i++) {
        const char *unit = hf_store_record_unit(hf_batch_at(batch, i));
        if (unit == NULL) continue;
        bool seen = false;
        for (size_t j = 0; j < count && j < capacity && !seen; j++)
            seen = strcmp(units[j], unit) == 0;
        if (seen) continue;
        if (count < capacity) units[count] = unit;
        count++;
    }
    return count;
}
