/* A batch: deep copies of mutation records, collected on the engine thread and written by the
 * store's writer thread in one transaction. Appending is on the hot path of every change, so a
 * batch allocates nothing per record once warmed up: records live in one growable array and their
 * strings in a chain of chunks that hf_batch_clear rewinds and keeps for the next batch. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/* Most records carry a few ids of a few dozen bytes; 64 KiB holds hundreds of them, so a
 * busy batch needs few chunks. A string larger than this (an event definition, a response
 * body) gets a chunk of its own size. */
#define CHUNK_SIZE_DEFAULT (64u * 1024)
#define RECORDS_CAPACITY_INITIAL 256u
#define HASH_SIZE 32u

typedef struct chunk {
    struct chunk *next;
    size_t capacity;
    size_t used;
    unsigned char data[];
} chunk_t;

struct hf_batch {
    hf_mutation_t *records;
    size_t count;
    size_t capacity;
    chunk_t *first;    /* every chunk ever allocated, kept across clears */
    chunk_t *current;  /* the chunk being filled; those before it are full */
};

/* Memory is bounded by limits.h (records per batch, size of each string), so running out of
 * it is not an operating error the server could answer sensibly. */
static void *allocate_or_abort(void *memory, size_t size) {
    void *result = realloc(memory, size);
    if (result == NULL) abort();
    return result;
}

static chunk_t *chunk_create(size_t capacity) {
    chunk_t *chunk = allocate_or_abort(NULL, sizeof(chunk_t) + capacity);
    chunk->next = NULL;
    chunk->capacity = capacity;
    chunk->used = 0;
    return chunk;
}

/* An empty chunk of at least size bytes after the current one. The chunks after the current
 * one are always empty (kept from earlier batches): the next is reused when big enough. */
static chunk_t *chunk_next(hf_batch_t *batch, size_t size) {
    chunk_t *current = batch->current;
    if (current != NULL && current->next != NULL && current->next->capacity >= size)
        return current->next;
    chunk_t *fresh = chunk_create(size > CHUNK_SIZE_DEFAULT ? size : CHUNK_SIZE_DEFAULT);
    if (current == NULL) {
        /* No chunk at all yet (a cleared batch has current == first). */
        fresh->next = batch->first;
        batch->first = fresh;
    } else {
        fresh->next = current->next;
        current->next = fresh;
    }
    return fresh;
}

/* Space for size bytes that stays put until the batch is cleared. Chunks never move, so the
 * pointers already handed out stay valid while the batch grows. */
static void *arena_take(hf_batch_t *batch, size_t size) {
    chunk_t *chunk = batch->current;
    if (chunk == NULL || chunk->capacity - chunk->used < size) chunk = chunk_next(batch, size);
    batch->current = chunk;
    void *space = chunk->data + chunk->used;
    chunk->used += size;
    return space;
}

static const char *copy_string(hf_batch_t *batch, const char *text) {
    if (text == NULL) return NULL;
    size_t size = strlen(text) + 1;
    char *copy = arena_take(batch, size);
    memcpy(copy, text, size);
    return copy;
}

static const uint8_t *copy_hash(hf_batch_t *batch, const uint8_t *hash) {
    if (hash == NULL) return NULL;
    uint8_t *copy = arena_take(batch, HASH_SIZE);
    memcpy(copy, hash, HASH_SIZE);
    return copy;
}

hf_batch_t *hf_batch_create(void) {
    hf_batch_t *batch = allocate_or_abort(NULL, sizeof *batch);
    memset(batch, 0, sizeof *batch);
    return batch;
}

void hf_batch_destroy(hf_batch_t *batch) {
    if (batch == NULL) return;
    chunk_t *chunk = batch->first;
    while (chunk != NULL) {
        chunk_t *next = chunk->next;
        free(chunk);
        chunk = next;
    }
    free(batch->records);
    free(batch);
}

void hf_batch_append(hf_batch_t *batch, const hf_mutation_t *mutation) {
    assert(batch != NULL && mutation != NULL);
    if (batch->count == batch->capacity) {
        size_t capacity = batch->capacity == 0 ? RECORDS_CAPACITY_INITIAL : batch->capacity * 2;
        batch->records = allocate_or_abort(batch->records, capacity * sizeof *batch->records);
        batch->capacity = capacity;
    }
    hf_mutation_t *copy = &batch->records[batch->count++];
    *copy = *mutation;
    copy->event_id = copy_string(batch, mutation->event_id);
    copy->seat_id = copy_string(batch, mutation->seat_id);
    copy->pool_id = copy_string(batch, mutation->pool_id);
    copy->hold_id = copy_string(batch, mutation->hold_id);
    copy->order_id = copy_string(batch, mutation->order_id);
    copy->user_id = copy_string(batch, mutation->user_id);
    copy->currency = copy_string(batch, mutation->currency);
    copy->payment_ref = copy_string(batch, mutation->payment_ref);
    copy->key = copy_string(batch, mutation->key);
    copy->text = copy_string(batch, mutation->text);
    copy->hash = copy_hash(batch, mutation->hash);
}

size_t hf_batch_count(const hf_batch_t *batch) {
    assert(batch != NULL);
    return batch->count;
}

/* The record moves when a later append grows the array: valid until the next append or clear. */
const hf_mutation_t *hf_batch_at(const hf_batch_t *batch, size_t index) {
    assert(batch != NULL && index < batch->count);
    return &batch->records[index];
}

void hf_batch_clear(hf_batch_t *batch) {
    assert(batch != NULL);
    for (chunk_t *chunk = batch->first; chunk != NULL; chunk = chunk->next) chunk->used = 0;
    batch->current = batch->first;
    batch->count = 0;
}

void hf_batch_sink_emit(void *batch, const hf_mutation_t *mutation) {
    hf_batch_append(batch, mutation);
}
