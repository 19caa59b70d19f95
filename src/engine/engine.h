/* The engine: owns the core on the loop's thread, turns HTTP requests into core commands,
 * collects the mutations of each loop turn into a batch for the store (group commit), and
 * gates every reply on the durability of what it observed.
 *
 * Threads: everything here runs on the libuv loop's thread, except the store's done callback,
 * which only wakes the loop. */
#ifndef HF_ENGINE_H
#define HF_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct hf_engine_options {
    const char *host;
    int port;
    const char *store_url;       /* "sqlite:PATH" */
    const char *api_key;         /* NULL or "": no authentication */
    bool demo;                   /* create the demo event when missing */
    /* Released and expired holds kept in memory; older ones are read back from the store
     * when asked for (hf_core_evict). */
    uint32_t finished_holds_max;
    /* Origins answered with CORS headers (API.md section 1), each scheme://host[:port] as a
     * browser sends it in Origin, already checked; at most HF_CORS_ORIGINS_MAX (limits.h).
     * The strings belong to the caller and outlive the engine. */
    const char *const *cors_origins;
    uint32_t cors_origin_count;
} hf_engine_options_t;

typedef struct hf_engine hf_engine_t;

/* Opens and loads the store, binds the listener. Returns NULL after printing why. */
hf_engine_t *hf_engine_create(uv_loop_t *loop, const hf_engine_options_t *options);
/* Runs the loop until a signal stops the server; returns the process exit code. */
int hf_engine_run(hf_engine_t *engine);
void hf_engine_destroy(hf_engine_t *engine);

#endif
