/* The unit of a record (store.h): which event or fleet a batch's record writes for, so a backend with
 * leases can fence a batch on exactly the units it touches. Pure: no I/O. */
#include <string.h>

#include "store/store.h"

/* Records of no event or fleet are fenced as one unit of their own. */
static const char *or_none(const char *unit) {
    return unit != NULL && unit[0] != '\0' ? unit : HF_STORE_UNIT_NONE;
}

const char *hf_store_record_unit(const hf_mutation_t *mutation) {
    switch (mutation->type) {
    case HF_MUTATION_EVENT_CREATE: return mutation->as.event_create.event_id;
    case HF_MUTATION_EVENT_SALES: return mutation->as.event_sales.event_id;
    case HF_MUTATION_EVENT_UPDATE: return mutation->as.event_update.event_id;
    case HF_MUTATION_EVENT_DELETE: return mutation->as.event_delete.event_id;
    case HF_MUTATION_SEAT: return mutation->as.seat.event_id;
    case HF_MUTATION_POOL: return mutation->as.pool.event_id;
    case HF_MUTATION_HOLD_CREATE: return mutation->as.hold_create.event_id;
    case HF_MUTATION_HOLD_UPDATE: return mutation->as.hold_update.event_id;
    case HF_MUTATION_ORDER_CREATE: return mutation->as.order_create.event_id;
    case HF_MUTATION_ORDER_ITEM: return mutation->as.order_item.event_id;
    case HF_MUTATION_ORDER_UPDATE: return mutation->as.order_update.event_id;
    /* A delivery's event_id is the provider's id of the delivery: the hold's is the unit. */
    case HF_MUTATION_DELIVERY: return or_none(mutation->as.delivery.hold_event_id);
    case HF_MUTATION_TICKET_CREATE:
    case HF_MUTATION_TICKET_UPDATE: return mutation->as.ticket.event_id;
    /* Dispatch's unit is the fleet. */
    case HF_MUTATION_DRIVER: return mutation->as.driver.fleet_id;
    case HF_MUTATION_RIDE: return mutation->as.ride.fleet_id;
    case HF_MUTATION_IDEMPOTENCY: return or_none(mutation->as.idempotency.unit);
    case HF_MUTATION_REFUND: return or_none(mutation->as.refund.event_id);
    }
    return NULL;
}

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
