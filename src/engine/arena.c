/* The request arena (arena.h): jansson's allocations for one request's body come from a
 * block reused by every request, instead of a dozen malloc and free calls per request. */
#include "engine/arena.h"

#include <jansson.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/limits.h"

/* Under AddressSanitizer the arena marks the space it has not handed out (or has taken back at
 * the end of a request) as poisoned, so a use of the DOM after its request is still caught as
 * it was with malloc and free. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(address, size) ASAN_POISON_MEMORY_REGION(address, size)
#define ARENA_UNPOISON(address, size) ASAN_UNPOISON_MEMORY_REGION(address, size)
#else
#define ARENA_POISON(address, size) ((void)(address), (void)(size))
#define ARENA_UNPOISON(address, size) ((void)(address), (void)(size))
#endif

/* Every block is aligned as malloc aligns, so jansson may store anything in it. */
#define ARENA_ALIGNMENT alignof(max_align_t)

/* Per thread: jansson's allocator is global to the process, and only the thread that opened
 * the arena may allocate from it. In practice that is the loop thread. */
static _Thread_local char *arena_memory; /* HF_REQUEST_ARENA_SIZE bytes, made at first use */
static _Thread_local size_t arena_used;
static _Thread_local bool arena_open; /* a request is being handled: allocate from it */

static bool in_arena(const void *pointer) {
    uintptr_t address = (uintptr_t)pointer, start = (uintptr_t)arena_memory;
    return arena_memory && address >= start && address - start < HF_REQUEST_ARENA_SIZE;
}

/* From the arena while a request is open and the block fits; from malloc otherwise (a body
 * with a huge DOM, or jansson used outside a request, such as at restore). */
static void *arena_malloc(size_t size) {
    size_t room = HF_REQUEST_ARENA_SIZE - arena_used;
    if (arena_open && size > 0 && size <= room) {
        size_t rounded = (size + ARENA_ALIGNMENT - 1) & ~(ARENA_ALIGNMENT - 1);
        if (rounded <= room) {
            char *block = arena_memory + arena_used;
            arena_used += rounded;
            ARENA_UNPOISON(block, size);
            return block;
        }
    }
    /* malloc(0) may return NULL, which jansson would take for a failure. */
    return malloc(size > 0 ? size : 1);
}

/* A block of the arena is taken back all at once when the request ends. */
static void arena_free(void *pointer) {
    if (!in_arena(pointer)) free(pointer);
}

void hf_arena_allocator_install(void) { json_set_alloc_funcs(arena_malloc, arena_free); }

void hf_arena_request_begin(void) {
    if (!arena_memory) {
        arena_memory = malloc(HF_REQUEST_ARENA_SIZE);
        if (!arena_memory) abort(); /* as hf_buffer_grow: no memory, no sensible answer */
        ARENA_POISON(arena_memory, HF_REQUEST_ARENA_SIZE);
    }
    arena_open = true;
}

void hf_arena_request_end(void) {
    arena_open = false;
    ARENA_POISON(arena_memory, arena_used);
    arena_used = 0;
}

void hf_arena_release(void) {
    if (!arena_memory) return;
    ARENA_UNPOISON(arena_memory, HF_REQUEST_ARENA_SIZE);
    free(arena_memory);
    arena_memory = NULL;
    arena_used = 0;
    arena_open = false;
}
