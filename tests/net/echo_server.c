/* A test server for src/net/http.c alone: every request is echoed back as JSON, and a few
 * command paths drive the server's durability gate from outside. Used by tests/net/test_http.py.
 *
 * Usage: echo_server HOST PORT. Prints "listening" on stdout once ready; SIGTERM or SIGINT shut
 * it down cleanly (every handle closed, everything freed) so leak checkers see a clean exit.
 *
 * Routes:
 *   POST /release?sequence=N      hf_http_server_release(N), answers {"released": N}
 *   POST /fail?durable=N          hf_http_server_fail_pending(N), answers {"failed": N}
 *   GET  /stats                   {"pending": P, "connections": C} (this request counts)
 *   POST /stop                    hf_http_server_stop_accepting
 *   GET  /stream                  opens a stream whose first data is "event: hello\ndata: {}\n\n"
 *   HEAD /stream                  the stream's head alone (hf_http_response_stream_head)
 *   POST /publish                 sends the body to every open stream, answers
 *                                 {"sent": S, "refused": R} (R: sends that returned false);
 *                                 with end=1 each stream is then closed (hf_http_stream_close)
 *   GET  /streams                 {"streams": N}: open streams whose closed callback has not run
 *   anything else                 {"method", "path", "query", "body", "headers": {...}}
 * Query parameters on any echo: delay_sequence=N gates the answer on sequence N; close=1 sets
 * response->close; size=N pads the answer with N bytes; status=N answers with that status;
 * headers=1 adds "X-Every: kept" (a header of every answer) and "X-Answer: this" (one of this
 * answer only). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "net/http.h"

typedef struct echo echo_t;

/* One open stream, in the echo's list until its closed callback runs. */
typedef struct subscriber {
    echo_t *echo;
    hf_http_stream_t *stream;
    struct subscriber *previous;
    struct subscriber *next;
} subscriber_t;

struct echo {
    uv_loop_t *loop;
    hf_http_server_t *server;
    uv_signal_t terminate;
    uv_signal_t interrupt;
    subscriber_t *subscribers;
    size_t stream_count;
};

/* Value of name=... in a query string as a number, or fallback. */
static unsigned long long query_number(const char *query, const char *name,
                                       unsigned long long fallback) {
    size_t name_length = strlen(name);
    for (const char *cursor = query; cursor && *cursor;) {
        if (strncmp(cursor, name, name_length) == 0 && cursor[name_length] == '=')
            return strtoull(cursor + name_length + 1, NULL, 10);
        cursor = strchr(cursor, '&');
        if (cursor) cursor++;
    }
    return fallback;
}

static void answer_number(hf_http_response_t *response, const char *key, uint64_t value) {
    hf_json_t json;
    hf_json_init(&json, &response->body);
    hf_json_object_begin(&json);
    hf_json_key(&json, key);
    hf_json_int(&json, (int64_t)value);
    hf_json_object_end(&json);
}

static void answer_echo(const hf_http_request_t *request, hf_http_response_t *response) {
    hf_json_t json;
    hf_json_init(&json, &response->body);
    hf_json_object_begin(&json);
    hf_json_key(&json, "method");
    hf_json_string(&json, request->method);
    hf_json_key(&json, "path");
    hf_json_string(&json, request->path);
    hf_json_key(&json, "query");
    hf_json_string(&json, request->query);
    hf_json_key(&json, "body");
    hf_json_string_length(&json, request->body, request->body_length);
    hf_json_key(&json, "body_length");
    hf_json_int(&json, (int64_t)request->body_length);
    hf_json_key(&json, "headers");
    hf_json_object_begin(&json);
    for (size_t i = 0; i < request->header_count; i++) {
        const hf_http_header_t *header = &request->headers[i];
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)header->name_length, header->name);
        hf_json_key(&json, name);
        hf_json_string_length(&json, header->value, header->value_length);
    }
    hf_json_object_end(&json);
    size_t length = 0;
    const char *host = hf_http_request_header(request, "HOST", &length);
    hf_json_key(&json, "host");
    if (host)
        hf_json_string_length(&json, host, length);
    else
        hf_json_null(&json);
    unsigned long long size = query_number(request->query, "size", 0);
    if (size) {
        hf_json_key(&json, "padding");
        hf_json_array_begin(&json);
        hf_json_array_end(&json);
        for (unsigned long long i = 0; i < size; i++) hf_buffer_append_char(&response->body, ' ');
    }
    hf_json_object_end(&json);
}

static void on_stream_closed(void *context, hf_http_stream_t *stream) {
    subscriber_t *subscriber = context;
    echo_t *echo = subscriber->echo;
    if (subscriber->previous)
        subscriber->previous->next = subscriber->next;
    else
        echo->subscribers = subscriber->next;
    if (subscriber->next) subscriber->next->previous = subscriber->previous;
    echo->stream_count--;
    free(subscriber);
}

static void open_stream(echo_t *echo, const hf_http_request_t *request,
                        hf_http_response_t *response) {
    subscriber_t *subscriber = calloc(1, sizeof *subscriber);
    if (!subscriber) abort();
    subscriber->echo = echo;
    subscriber->next = echo->subscribers;
    if (echo->subscribers) echo->subscribers->previous = subscriber;
    echo->subscribers = subscriber;
    echo->stream_count++;
    subscriber->stream = hf_http_response_stream(response, on_stream_closed, subscriber);
    hf_buffer_append_string(&response->body, "event: hello\ndata: {}\n\n");
    response->durable_sequence = query_number(request->query, "delay_sequence", 0);
}

/* Sends are safe while iterating: a closed callback never runs from inside a send. */
static void publish(echo_t *echo, const hf_http_request_t *request,
                    hf_http_response_t *response) {
    bool end = query_number(request->query, "end", 0) != 0;
    int64_t sent = 0, refused = 0;
    for (subscriber_t *subscriber = echo->subscribers; subscriber; subscriber = subscriber->next) {
        if (hf_http_stream_send(subscriber->stream, request->body, request->body_length))
            sent++;
        else
            refused++;
        if (end) hf_http_stream_close(subscriber->stream);
    }
    hf_json_t json;
    hf_json_init(&json, &response->body);
    hf_json_object_begin(&json);
    hf_json_key(&json, "sent");
    hf_json_int(&json, sent);
    hf_json_key(&json, "refused");
    hf_json_int(&json, refused);
    hf_json_object_end(&json);
}

static void handle(void *context, const hf_http_request_t *request,
                   hf_http_response_t *response) {
    echo_t *echo = context;
    const char *query = request->query;
    if (strcmp(request->path, "/release") == 0) {
        uint64_t sequence = query_number(query, "sequence", 0);
        hf_http_server_release(echo->server, sequence);
        answer_number(response, "released", sequence);
        return;
    }
    if (strcmp(request->path, "/fail") == 0) {
        uint64_t durable = query_number(query, "durable", 0);
        hf_http_server_fail_pending(echo->server, durable);
        answer_number(response, "failed", durable);
        return;
    }
    if (strcmp(request->path, "/stats") == 0) {
        hf_json_t json;
        hf_json_init(&json, &response->body);
        hf_json_object_begin(&json);
        hf_json_key(&json, "pending");
        hf_json_int(&json, (int64_t)hf_http_server_pending(echo->server));
        hf_json_key(&json, "connections");
        hf_json_int(&json, (int64_t)hf_http_server_connections(echo->server));
        hf_json_object_end(&json);
        return;
    }
    if (strcmp(request->path, "/stop") == 0) {
        hf_http_server_stop_accepting(echo->server);
        answer_number(response, "stopped", 1);
        return;
    }
    if (strcmp(request->path, "/stream") == 0 && strcmp(request->method, "HEAD") == 0) {
        hf_http_response_stream_head(response);
        return;
    }
    if (strcmp(request->path, "/stream") == 0 && strcmp(request->method, "GET") == 0) {
        open_stream(echo, request, response);
        return;
    }
    if (strcmp(request->path, "/publish") == 0 && strcmp(request->method, "POST") == 0) {
        publish(echo, request, response);
        return;
    }
    if (strcmp(request->path, "/streams") == 0) {
        answer_number(response, "streams", echo->stream_count);
        return;
    }
    if (strcmp(request->path, "/error") == 0) {
        hf_http_error(response, 422, "invalid_request", "a field is wrong", "user_id");
        return;
    }
    answer_echo(request, response);
    response->durable_sequence = query_number(query, "delay_sequence", 0);
    response->close = query_number(query, "close", 0) != 0;
    response->status = (int)query_number(query, "status", 200);
    if (query_number(query, "headers", 0)) {
        hf_http_response_header_add(response, "X-Every", "kept", true);
        hf_http_response_header_add(response, "X-Answer", "this", false);
    }
}

static void on_signal(uv_signal_t *signal, int number) {
    echo_t *echo = signal->data;
    hf_http_server_close(echo->server);
    uv_close((uv_handle_t *)&echo->terminate, NULL);
    uv_close((uv_handle_t *)&echo->interrupt, NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOST PORT\n", argv[0]);
        return 2;
    }
    echo_t echo = {.loop = uv_default_loop()};
    hf_http_config_t config = {
        .host = argv[1], .port = atoi(argv[2]), .handler = handle, .context = &echo};
    char error[256];
    if (hf_http_server_start(&echo.server, echo.loop, &config, error, sizeof error) < 0) {
        fprintf(stderr, "echo_server: %s\n", error);
        uv_run(echo.loop, UV_RUN_DEFAULT); /* lets the failed listener close */
        uv_loop_close(echo.loop);
        return 1;
    }
    uv_signal_init(echo.loop, &echo.terminate);
    uv_signal_init(echo.loop, &echo.interrupt);
    echo.terminate.data = echo.interrupt.data = &echo;
    uv_signal_start(&echo.terminate, on_signal, SIGTERM);
    uv_signal_start(&echo.interrupt, on_signal, SIGINT);
    printf("listening\n");
    fflush(stdout);
    uv_run(echo.loop, UV_RUN_DEFAULT);
    hf_http_server_free(echo.server);
    uv_loop_close(echo.loop);
    return 0;
}
