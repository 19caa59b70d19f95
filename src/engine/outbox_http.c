/* The notifications' HTTP client on libcurl's multi interface and libuv (outbox_http.h). */
#include "engine/outbox_http.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buffer.h"
#include "lib/limits.h"

/* One delivery in flight, on its own easy handle (kept for the next one). */
typedef struct transfer {
    CURL *easy;
    struct curl_slist *headers;
    hf_buffer_t body; /* the request's body, which libcurl reads from here */
    uint32_t tag;
    bool busy;
    char error[CURL_ERROR_SIZE];
} transfer_t;

/* A socket libcurl watches, on its poll handle. */
typedef struct watched {
    uv_poll_t poll;
    curl_socket_t socket;
    hf_outbox_http_t *http;
} watched_t;

struct hf_outbox_http {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    const char *url, *ca_file;
    hf_outbox_http_done_fn done;
    void *context;
    transfer_t transfers[HF_NOTIFY_IN_FLIGHT_MAX];
    uint32_t in_flight;
    bool closing;
};

static void ended_report(hf_outbox_http_t *http) {
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(http->multi, &left)) != NULL) {
        if (message->msg != CURLMSG_DONE) continue;
        transfer_t *transfer = NULL;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&transfer);
        CURLcode result = message->data.result;
        long status = 0;
        if (result == CURLE_OK) curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(http->multi, transfer->easy);
        transfer->busy = false;
        http->in_flight--;
        const char *why = transfer->error[0] ? transfer->error : curl_easy_strerror(result);
        http->done(http->context, transfer->tag, result == CURLE_OK ? (int)status : 0,
                   result == CURLE_OK ? NULL : why);
    }
}

static void on_poll(uv_poll_t *handle, int status, int events) {
    watched_t *watched = handle->data;
    int flags = status < 0 ? CURL_CSELECT_ERR : 0;
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    int running;
    curl_multi_socket_action(watched->http->multi, watched->socket, flags, &running);
    ended_report(watched->http);
}

static void on_timer(uv_timer_t *timer) {
    hf_outbox_http_t *http = timer->data;
    int running;
    curl_multi_socket_action(http->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    ended_report(http);
}

static void watched_closed(uv_handle_t *handle) { free(handle->data); }

/* CURLMOPT_SOCKETFUNCTION: what libcurl wants to hear of socket, on a poll handle of its own. */
static int socket_changed(CURL *easy, curl_socket_t socket, int action, void *user,
                          void *socket_data) {
    hf_outbox_http_t *http = user;
    watched_t *watched = socket_data;
    if (action == CURL_POLL_REMOVE) {
        if (watched != NULL) {
            uv_poll_stop(&watched->poll);
            uv_close((uv_handle_t *)&watched->poll, watched_closed);
            curl_multi_assign(http->multi, socket, NULL);
        }
        return 0;
    }
    if (watched == NULL) {
        watched = calloc(1, sizeof *watched);
        if (watched == NULL) abort();
        watched->socket = socket;
        watched->http = http;
        uv_poll_init_socket(http->loop, &watched->poll, socket);
        watched->poll.data = watched;
        curl_multi_assign(http->multi, socket, watched);
    }
    int events = 0;
    if (action == CURL_POLL_IN || action == CURL_POLL_INOUT) events |= UV_READABLE;
    if (action == CURL_POLL_OUT || action == CURL_POLL_INOUT) events |= UV_WRITABLE;
    uv_poll_start(&watched->poll, events, on_poll);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: libcurl's next timeout, on the loop's timer (never acted on here). */
static int timeout_changed(CURLM *multi, long timeout_ms, void *user) {
    hf_outbox_http_t *http = user;
    if (timeout_ms < 0) uv_timer_stop(&http->timer);
    else uv_timer_start(&http->timer, on_timer, (uint64_t)timeout_ms, 0);
    return 0;
}

/* The receiver's answer is read and dropped: only its status counts. */
static size_t answer_discard(char *data, size_t size, size_t count, void *user) {
    return size * count;
}

hf_outbox_http_t *hf_outbox_http_create(uv_loop_t *loop, const char *url, const char *ca_file,
                                        hf_outbox_http_done_fn done, void *context, char *error,
                                        size_t error_size) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(error, error_size, "libcurl cannot be initialised");
        return NULL;
    }
    hf_outbox_http_t *http = calloc(1, sizeof *http);
    if (http == NULL) abort();
    *http = (hf_outbox_http_t){.loop = loop,
                               .url = url,
                               .ca_file = ca_file,
                               .done = done,
                               .context = context};
    http->multi = curl_multi_init();
    if (http->multi == NULL) {
        snprintf(error, error_size, "libcurl's multi handle cannot be made");
        free(http);
        return NULL;
    }
    curl_multi_setopt(http->multi, CURLMOPT_SOCKETFUNCTION, socket_changed);
    curl_multi_setopt(http->multi, CURLMOPT_SOCKETDATA, http);
    curl_multi_setopt(http->multi, CURLMOPT_TIMERFUNCTION, timeout_changed);
    curl_multi_setopt(http->multi, CURLMOPT_TIMERDATA, http);
    curl_multi_setopt(http->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)HF_NOTIFY_IN_FLIGHT_MAX);
    curl_multi_setopt(http->multi, CURLMOPT_MAXCONNECTS, (long)HF_NOTIFY_IN_FLIGHT_MAX);
    uv_timer_init(loop, &http->timer);
    http->timer.data = http;
    return http;
}

/* The options every delivery of a transfer shares, set once when its easy handle is made. */
static CURL *transfer_easy_make(hf_outbox_http_t *http, transfer_t *transfer) {
    CURL *easy = curl_easy_init();
    if (easy == NULL) abort();
    curl_easy_setopt(easy, CURLOPT_URL, http->url);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)HF_NOTIFY_TIMEOUT_MS);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, answer_discard);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer->error);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "holdfast-notify");
    if (http->ca_file != NULL) curl_easy_setopt(easy, CURLOPT_CAINFO, http->ca_file);
    return easy;
}

/* Sets a transfer's easy handle for one delivery: its body and its signature, the rest kept,
 * so a handle is reused as it is and its connection with it. */
static void transfer_prepare(hf_outbox_http_t *http, transfer_t *transfer, const char *signature) {
    if (transfer->easy == NULL) transfer->easy = transfer_easy_make(http, transfer);
    CURL *easy = transfer->easy;
    curl_slist_free_all(transfer->headers);
    char header[64 + 2 * 32 + 32];
    snprintf(header, sizeof header, "Holdfast-Signature: %s", signature);
    transfer->headers = curl_slist_append(NULL, "Content-Type: application/json");
    transfer->headers = curl_slist_append(transfer->headers, header);
    /* A small body needs no 100-continue round trip. */
    transfer->headers = curl_slist_append(transfer->headers, "Expect:");
    transfer->error[0] = '\0';
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, transfer->headers);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, transfer->body.data);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)transfer->body.length);
}

int hf_outbox_http_send(hf_outbox_http_t *http, uint32_t tag, const char *body, size_t length,
                        const char *signature) {
    if (http->closing) return -1;
    for (uint32_t i = 0; i < HF_NOTIFY_IN_FLIGHT_MAX; i++) {
        transfer_t *transfer = &http->transfers[i];
        if (transfer->busy) continue;
        hf_buffer_reset(&transfer->body);
        hf_buffer_append(&transfer->body, body, length);
        transfer_prepare(http, transfer, signature);
        transfer->tag = tag;
        if (curl_multi_add_handle(http->multi, transfer->easy) != CURLM_OK) return -1;
        transfer->busy = true;
        http->in_flight++;
        return 0;
    }
    return -1;
}

uint32_t hf_outbox_http_in_flight(const hf_outbox_http_t *http) { return http->in_flight; }

static void timer_closed(uv_handle_t *handle) { free(handle->data); }

void hf_outbox_http_close(hf_outbox_http_t *http) {
    if (http == NULL) return;
    http->closing = true;
    for (uint32_t i = 0; i < HF_NOTIFY_IN_FLIGHT_MAX; i++) {
        transfer_t *transfer = &http->transfers[i];
        if (transfer->busy) curl_multi_remove_handle(http->multi, transfer->easy);
        if (transfer->easy) curl_easy_cleanup(transfer->easy);
        curl_slist_free_all(transfer->headers);
        hf_buffer_free(&transfer->body);
    }
    /* Its sockets' poll handles close through socket_changed. */
    curl_multi_cleanup(http->multi);
    uv_timer_stop(&http->timer);
    uv_close((uv_handle_t *)&http->timer, timer_closed);
}
