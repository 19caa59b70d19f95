/* Deferred answers (http.h): an answer that another node gives, held in its connection's
 * queue until the engine finishes it, and strings kept for an answer's headers. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

#define SLOT_NONE UINT32_MAX

static queued_response_t *entry_of(hf_http_response_t *response) {
    return CONTAINER_OF(response, queued_response_t, response);
}

hf_http_deferred_t hf_http_response_defer(hf_http_response_t *response) {
    queued_response_t *entry = entry_of(response);
    hf_http_server_t *server = entry->connection->server;
    for (uint32_t slot = 0; slot < HF_HTTP_DEFERRED_MAX; slot++) {
        if (server->deferred[slot]) continue;
        server->deferred[slot] = entry;
        entry->deferred = true;
        entry->deferred_slot = slot + 1; /* 0: none, as a zeroed record says */
        return (hf_http_deferred_t){slot, server->deferred_generation[slot]};
    }
    return (hf_http_deferred_t){SLOT_NONE, 0};
}

bool hf_http_deferred_valid(hf_http_deferred_t deferred) { return deferred.slot != SLOT_NONE; }

hf_http_response_t *hf_http_deferred_response(hf_http_server_t *server,
                                              hf_http_deferred_t deferred) {
    if (deferred.slot >= HF_HTTP_DEFERRED_MAX ||
        server->deferred_generation[deferred.slot] != deferred.generation)
        return NULL;
    queued_response_t *entry = server->deferred[deferred.slot];
    return entry ? &entry->response : NULL;
}

void hf_http_deferred_finish(hf_http_server_t *server, hf_http_deferred_t deferred) {
    hf_http_response_t *response = hf_http_deferred_response(server, deferred);
    if (!response) return;
    queued_response_t *entry = entry_of(response);
    connection_t *connection = entry->connection;
    server->deferred[deferred.slot] = NULL;
    server->deferred_generation[deferred.slot]++;
    entry->deferred = false;
    entry->deferred_slot = 0;
    response->durable_sequence = 0;
    /* The body's length changed since the record was queued: count it again. */
    connection->queued_bytes += response->body.length;
    if (connection->list == LIST_WAITING) {
        list_remove(&connection->list_link);
        connection->list = LIST_NONE;
    }
    connection_settle(connection);
}

/* Gives the entry's deferred slot back: a handle to it no longer resolves. */
static void deferred_slot_release(queued_response_t *entry) {
    if (!entry->deferred_slot) return;
    hf_http_server_t *server = entry->connection->server;
    uint32_t slot = entry->deferred_slot - 1;
    server->deferred[slot] = NULL;
    server->deferred_generation[slot]++;
    entry->deferred_slot = 0;
    entry->deferred = false;
}

void response_deferred_forget(queued_response_t *entry) {
    deferred_slot_release(entry);
    for (uint32_t i = 0; i < entry->kept_count; i++) free(entry->kept[i]);
    entry->kept_count = 0;
}

const char *hf_http_response_keep(hf_http_response_t *response, const char *text, size_t length) {
    queued_response_t *entry = entry_of(response);
    if (entry->kept_count >= sizeof entry->kept / sizeof entry->kept[0]) return NULL;
    char *copy = malloc(length + 1);
    if (!copy) abort();
    memcpy(copy, text, length);
    copy[length] = '\0';
    entry->kept[entry->kept_count++] = copy;
    return copy;
}

void hf_http_response_undefer(hf_http_response_t *response) {
    deferred_slot_release(entry_of(response));
}

hf_http_response_t *hf_http_deferred_reopen(hf_http_server_t *server, hf_http_deferred_t deferred) {
    hf_http_response_t *response = hf_http_deferred_response(server, deferred);
    if (response) hf_http_response_undefer(response);
    return response;
}

void hf_http_response_settle(hf_http_response_t *response) {
    queued_response_t *entry = entry_of(response);
    connection_t *connection = entry->connection;
    if (!entry->deferred) {
        /* As at hf_http_deferred_finish: the body was empty when the record was queued. */
        connection->queued_bytes += response->body.length;
        if (connection->list == LIST_WAITING) {
            list_remove(&connection->list_link);
            connection->list = LIST_NONE;
        }
    }
    connection_settle(connection);
}
