/* The table of backends, keyed by the URL scheme: hf_store_open picks a backend here, so a new
 * one (store/NAME/) plugs in with one row and no #ifdef anywhere else. */
#include <string.h>

#include "store/backend.h"

typedef struct backend_row {
    const char *scheme;                /* what the URL begins with */
    const hf_store_backend_t *backend; /* NULL: known, but not in this build */
    const char *missing;               /* the answer when backend is NULL */
} backend_row_t;

/* PostgreSQL's URL is handed to libpq as it is, in either of its two spellings. */
static const backend_row_t BACKENDS[] = {
    {"sqlite:", &hf_store_sqlite_backend, NULL},
    {"postgres://", &hf_store_postgres_backend, NULL},
    {"postgresql://", &hf_store_postgres_backend, NULL},
};

const hf_store_backend_t *hf_store_backend_find(const char *url, char *error, size_t error_size) {
    for (size_t i = 0; url != NULL && i < sizeof BACKENDS / sizeof BACKENDS[0]; i++) {
        const backend_row_t *row = &BACKENDS[i];
        size_t length = strlen(row->scheme);
        if (strncmp(url, row->scheme, length) != 0) continue;
        if (row->backend == NULL) {
            hf_store_error_write(error, error_size, "store: %s", row->missing);
            return NULL;
        }
        /* A scheme with nothing after it names no store: it is an unknown URL. */
        if (url[length] != '\0') return row->backend;
        break;
    }
    hf_store_error_write(error, error_size,
                         "store: unknown store URL \"%s\": expected sqlite:PATH or postgres://...",
                         url != NULL ? url : "");
    return NULL;
}
