/* The notifications' HTTP client (API.md section 15): libcurl's multi interface driven by the
 * engine's libuv loop (curl_multi_socket_action, with curl's sockets on uv_poll handles and
 * its timeout on a uv_timer: libcurl's "multi-uv" pattern), so no delivery ever blocks the
 * loop and no thread is added. One multi handle keeps the connections to the receiver open
 * between deliveries (at most HF_NOTIFY_IN_FLIGHT_MAX of them); https is verified against the
 * system's authorities, or the file --notify-ca names. Redirects are not followed: a 3xx is
 * no 2xx, so it is retried.
 *
 * Threads: the loop's. Ownership: the outbox (outbox.h) owns the client; a body handed to
 * send is copied. */
#ifndef HF_ENGINE_OUTBOX_HTTP_H
#define HF_ENGINE_OUTBOX_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct hf_outbox_http hf_outbox_http_t;

/* A delivery's end: status is the receiver's HTTP status, 0 when none came, with error saying
 * why (a borrowed sentence) when none came. tag is send's. */
typedef void (*hf_outbox_http_done_fn)(void *context, uint32_t tag, int status, const char *error);

/* NULL with a sentence in error when libcurl cannot be set up. url and ca_file (NULL: the
 * system's) are borrowed for the client's life. */
hf_outbox_http_t *hf_outbox_http_create(uv_loop_t *loop, const char *url, const char *ca_file,
                                        hf_outbox_http_done_fn done, void *context, char *error,
                                        size_t error_size);
/* POSTs body with the header Holdfast-Signature: signature; 0, or -1 when every transfer is
 * busy (hf_outbox_http_in_flight is HF_NOTIFY_IN_FLIGHT_MAX). done(tag) follows, from the loop,
 * never from within send. */
int hf_outbox_http_send(hf_outbox_http_t *http, uint32_t tag, const char *body, size_t length,
                        const char *signature);
uint32_t hf_outbox_http_in_flight(const hf_outbox_http_t *http);
/* Abandons the deliveries in flight (no done follows) and closes the loop's handles; the
 * client is freed by the last close callback. NULL is accepted. */
void hf_outbox_http_close(hf_outbox_http_t *http);

#endif
