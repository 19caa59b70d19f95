/* The request arena: jansson allocates a request body's DOM with a dozen mallocs and frees.
 * Between hf_arena_request_begin and hf_arena_request_end its allocations come instead from
 * one block of HF_REQUEST_ARENA_SIZE bytes, taken back whole at the end (beyond the block
 * they fall back to malloc).
 *
 * Ownership: the arena owns its block (per thread, made at the first request). Nothing
 * jansson made during a request may be used after its end: the body is freed before it.
 * Loop thread only. */
#ifndef HF_ENGINE_ARENA_H
#define HF_ENGINE_ARENA_H

/* Makes jansson allocate through the arena; once, before any request. */
void hf_arena_allocator_install(void);
void hf_arena_request_begin(void);
void hf_arena_request_end(void);
/* Frees the block (at shutdown, after the last request). */
void hf_arena_release(void);

#endif
