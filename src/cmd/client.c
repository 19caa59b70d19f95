/* The commands that talk to a running server (commands.h): event create|show, calendar
 * create|show and orders export. They go through the HTTP API like any client, so the server stays the only
 * writer of its store and every rule of the API applies. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/http_client.h"
#include "lib/buffer.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"
/* An event's definition is a request body: the server takes at most 1 MiB. */
#define DEFINITION_SIZE_MAX (1024u * 1024)
/* Orders asked for per page: the most the server gives (docs/API.md, box-office lists). */
#define EXPORT_PAGE_SIZE 1000

static const char EVENT_USAGE[] =
    "usage: holdfast event create FILE.json [--server URL]\n"
    "       holdfast event show ID [--server URL]\n"
    "Creates an event from its definition (FILE.json, or - for standard input; the body of\n"
    "POST /v1/events) or prints one event, through a running server; the server's JSON answer\n"
    "is printed on standard output.\n"
    "  --server URL   the server, [http://]HOST:PORT: http:// when no scheme is given\n"
    "                 (default " DEFAULT_SERVER ") [HOLDFAST_SERVER]\n"
    "The API key is read from HOLDFAST_API_KEY (never from the command line, which other\n"
    "users of the machine can read). Exit codes: 0 done, 1 the server refused (its error code\n"
    "and message on standard error) or cannot be reached, 2 usage.\n";

static const char CALENDAR_USAGE[] =
    "usage: holdfast calendar create FILE.json [--server URL]\n"
    "       holdfast calendar show ID [--server URL]\n"
    "Creates a calendar from its definition (FILE.json, or - for standard input; the body of\n"
    "POST /v1/calendars) or prints one calendar's summary, through a running server; the\n"
    "server's JSON answer is printed on standard output.\n"
    "  --server URL   the server, [http://]HOST:PORT: http:// when no scheme is given\n"
    "                 (default " DEFAULT_SERVER ") [HOLDFAST_SERVER]\n"
    "The API key is read from HOLDFAST_API_KEY. Exit codes: 0 done, 1 the server refused (its\n"
    "error code and message on standard error) or cannot be reached, 2 usage.\n";

static const char ORDERS_USAGE[] =
    "usage: holdfast orders export --event ID [--server URL]\n"
    "Prints every order of the event as CSV (RFC 4180, CRLF line ends) on standard output,\n"
    "oldest first, cancelled ones included, through a running server. Columns: order_id,\n"
    "event, user_id, reservation_id, status, created_at, total, currency, payment_ref, seats\n"
    "(space-separated), pools (ID:COUNT, space-separated).\n"
    "  --event ID     the event\n"
    "  --server URL   the server, [http://]HOST:PORT: http:// when no scheme is given\n"
    "                 (default " DEFAULT_SERVER ") [HOLDFAST_SERVER]\n"
    "The API key is read from HOLDFAST_API_KEY. Exit codes: 0 done, 1 the server refused or\n"
    "cannot be reached (what was printed before is incomplete), 2 usage.\n";

/* Path segment: what is not unreserved is percent-encoded (ids are [A-Za-z0-9_.], but a
 * mistyped one must still make a well-formed request, and get its 404). */
static void segment_append(char *out, size_t size, const char *text) {
    size_t used = strlen(out);
    for (const unsigned char *c = (const unsigned char *)text; *c && used + 4 < size; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("-._~", *c))
            out[used++] = (char)*c;
        else used += (size_t)snprintf(out + used, size - used, "%%%02X", *c);
    }
    out[used] = '\0';
}

/* --server's value (DEFAULT_SERVER when not given) as a URL; a refused one is a usage error:
 * HF_EXIT_USAGE with its line on standard error, else 0. */
static int server_url(const char *command, const char *given, char *url, size_t size) {
    char error[512];
    if (hf_client_server_url(given ? given : DEFAULT_SERVER, url, size, error, sizeof error) != 0)
        return hf_command_fail(HF_EXIT_USAGE, command, "%s", error);
    return 0;
}

/* The server's error as "CODE: message (HTTP status)" on standard error; exit 1. */
static int answer_refused(const char *command, const hf_client_answer_t *answer) {
    json_t *root = json_loadb(answer->body, answer->body_length, 0, NULL);
    json_t *error = json_object_get(root, "error");
    const char *code = json_string_value(json_object_get(error, "code"));
    const char *message = json_string_value(json_object_get(error, "message"));
    if (code)
        hf_command_fail(HF_EXIT_FAILURE, command, "%s: %s (HTTP %d)", code, message ? message : "",
                        answer->status);
    else hf_command_fail(HF_EXIT_FAILURE, command, "the server answered HTTP %d", answer->status);
    json_decref(root);
    return HF_EXIT_FAILURE;
}

/* One request; prints the body on success. */
static int request_print(const char *command, const char *server, const char *method,
                         const char *target, const char *body, size_t length) {
    hf_client_answer_t answer;
    char error[512];
    if (hf_client_request(server, getenv("HOLDFAST_API_KEY"), method, target, body, length, &answer,
                          error, sizeof error) != 0)
        return hf_command_fail(HF_EXIT_FAILURE, command, "%s", error);
    int code = HF_EXIT_OK;
    if (answer.status < 200 || answer.status > 299) {
        code = answer_refused(command, &answer);
    } else {
        fwrite(answer.body, 1, answer.body_length, stdout);
        fputc('\n', stdout);
        if (fflush(stdout) != 0 || ferror(stdout)) code = HF_EXIT_FAILURE;
    }
    hf_client_answer_free(&answer);
    return code;
}

/* FILE (or - for standard input), at most DEFINITION_SIZE_MAX bytes, into a malloc'd buffer. */
static char *file_read(const char *path, size_t *length, char *error, size_t size) {
    FILE *file = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!file) {
        snprintf(error, size, "cannot read %.300s: %s", path, strerror(errno));
        return NULL;
    }
    char *data = malloc(DEFINITION_SIZE_MAX + 1);
    if (!data) abort();
    *length = fread(data, 1, DEFINITION_SIZE_MAX + 1, file);
    bool failed = ferror(file) != 0;
    if (file != stdin) fclose(file);
    if (failed || *length > DEFINITION_SIZE_MAX) {
        snprintf(error, size,
                 failed ? "cannot read %.300s"
                        : "%.300s is larger than 1 MiB, the "
                          "largest body the server takes",
                 path);
        free(data);
        return NULL;
    }
    return data;
}

/* What event create|show and calendar create|show differ in. */
typedef struct definition_kind {
    const char *name;       /* "event" */
    const char *usage;      /* its --help */
    const char *collection; /* "/v1/events" */
    const char *const *create_names, *const *show_names;
} definition_kind_t;

/* KIND create FILE.json | KIND show ID, through the server. */
static int definition_command(const definition_kind_t *kind, int argc, char **argv) {
    hf_argument_t options[] = {{"--server", "HOLDFAST_SERVER", false, NULL}};
    const char *positional[1];
    const char *action = argc > 1 ? argv[1] : NULL;
    bool known = action && (strcmp(action, "create") == 0 || strcmp(action, "show") == 0);
    if (!known && action && (strcmp(action, "--help") == 0 || strcmp(action, "-h") == 0))
        return hf_command_usage(kind->usage);
    if (!known)
        return hf_command_fail(HF_EXIT_USAGE, kind->name,
                               "%s (the actions are create FILE.json "
                               "and show ID)",
                               action ? "unknown action" : "no action given");
    bool create = strcmp(action, "create") == 0;
    char command[64];
    snprintf(command, sizeof command, "%s %s", kind->name, action);
    switch (hf_arguments_read(command, argc, argv, 2, options, 1, positional, 1,
                              create ? kind->create_names : kind->show_names)) {
    case HF_ARGUMENTS_HELP: return hf_command_usage(kind->usage);
    case HF_ARGUMENTS_REFUSED: return HF_EXIT_USAGE;
    case HF_ARGUMENTS_OK: break;
    }
    char server[HF_CLIENT_URL_SIZE_MAX];
    int refused = server_url(command, options[0].value, server, sizeof server);
    if (refused) return refused;
    if (!create) {
        char target[512];
        snprintf(target, sizeof target, "%s/", kind->collection);
        segment_append(target, sizeof target, positional[0]);
        return request_print(command, server, "GET", target, NULL, 0);
    }
    char error[512];
    size_t length = 0;
    char *body = file_read(positional[0], &length, error, sizeof error);
    if (!body) return hf_command_fail(HF_EXIT_FAILURE, command, "%s", error);
    int code = request_print(command, server, "POST", kind->collection, body, length);
    free(body);
    return code;
}

int hf_command_event(int argc, char **argv) {
    static const char *const create_names[] = {"FILE.json (the event's definition)"};
    static const char *const show_names[] = {"ID (the event's id)"};
    static const definition_kind_t kind = {"event", EVENT_USAGE, "/v1/events", create_names,
                                           show_names};
    return definition_command(&kind, argc, argv);
}

int hf_command_calendar(int argc, char **argv) {
    static const char *const create_names[] = {"FILE.json (the calendar's definition)"};
    static const char *const show_names[] = {"ID (the calendar's id)"};
    static const definition_kind_t kind = {"calendar", CALENDAR_USAGE, "/v1/calendars",
                                           create_names, show_names};
    return definition_command(&kind, argc, argv);
}

/* ---- orders export ---- */

/* One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, quotes doubled. */
static void csv_field(FILE *out, const char *text, bool last) {
    if (text[strcspn(text, ",\"\r\n")] == '\0') {
        fputs(text, out);
    } else {
        fputc('"', out);
        for (const char *c = text; *c; c++) {
            if (*c == '"') fputc('"', out);
            fputc(*c, out);
        }
        fputc('"', out);
    }
    fputs(last ? "\r\n" : ",", out);
}

static const char *member_text(json_t *order, const char *key, char scratch[32]) {
    json_t *value = json_object_get(order, key);
    if (json_is_string(value)) return json_string_value(value);
    if (json_is_integer(value)) {
        snprintf(scratch, 32, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        return scratch;
    }
    return "";
}

static void csv_order(FILE *out, json_t *order) {
    static const char *const TEXT_COLUMNS[] = {"order_id",       "event",    "user_id",
                                               "reservation_id", "status",   "created_at",
                                               "total",          "currency", "payment_ref"};
    char scratch[32];
    for (size_t i = 0; i < sizeof TEXT_COLUMNS / sizeof TEXT_COLUMNS[0]; i++)
        csv_field(out, member_text(order, TEXT_COLUMNS[i], scratch), false);
    hf_buffer_t list = {0};
    size_t index;
    json_t *seat;
    json_array_foreach(json_object_get(order, "seats"), index, seat) {
        if (index) hf_buffer_append_char(&list, ' ');
        if (json_is_string(seat)) hf_buffer_append_string(&list, json_string_value(seat));
    }
    hf_buffer_append_char(&list, '\0');
    csv_field(out, list.data, false);
    hf_buffer_reset(&list);
    const char *pool;
    json_t *count;
    json_object_foreach(json_object_get(order, "pools"), pool, count)
        hf_buffer_printf(&list, "%s%s:%" JSON_INTEGER_FORMAT, list.length ? " " : "", pool,
                         json_integer_value(count));
    hf_buffer_append_char(&list, '\0');
    csv_field(out, list.data, true);
    hf_buffer_free(&list);
}

/* One page of orders after cursor (empty: from the first); the next cursor, or "" when done. */
static int export_page(const char *server, const char *event, char *cursor, size_t cursor_size) {
    char target[1024] = "/v1/events/";
    segment_append(target, sizeof target, event);
    snprintf(target + strlen(target), sizeof target - strlen(target), "/orders?limit=%d%s",
             EXPORT_PAGE_SIZE, *cursor ? "&after=" : "");
    segment_append(target, sizeof target, cursor);
    hf_client_answer_t answer;
    char error[512];
    if (hf_client_request(server, getenv("HOLDFAST_API_KEY"), "GET", target, NULL, 0, &answer,
                          error, sizeof error) != 0)
        return hf_command_fail(HF_EXIT_FAILURE, "orders export", "%s", error);
    if (answer.status != 200) {
        int code = answer_refused("orders export", &answer);
        hf_client_answer_free(&answer);
        return code;
    }
    json_t *root = json_loadb(answer.body, answer.body_length, 0, NULL);
    hf_client_answer_free(&answer);
    json_t *orders = json_object_get(root, "orders");
    if (!json_is_array(orders)) {
        json_decref(root);
        return hf_command_fail(HF_EXIT_FAILURE, "orders export",
                               "the server's answer has no "
                               "list of orders");
    }
    size_t index;
    json_t *order;
    /* The header goes out with the first page, so a refused export prints nothing. */
    if (*cursor == '\0')
        fputs("order_id,event,user_id,reservation_id,status,created_at,total,currency,"
              "payment_ref,seats,pools\r\n",
              stdout);
    json_array_foreach(orders, index, order) csv_order(stdout, order);
    const char *next = json_string_value(json_object_get(root, "next"));
    snprintf(cursor, cursor_size, "%s", next ? next : "");
    json_decref(root);
    return HF_EXIT_OK;
}

int hf_command_orders(int argc, char **argv) {
    const char *action = argc > 1 ? argv[1] : NULL;
    if (action && (strcmp(action, "--help") == 0 || strcmp(action, "-h") == 0))
        return hf_command_usage(ORDERS_USAGE);
    if (!action || strcmp(action, "export") != 0)
        return hf_command_fail(HF_EXIT_USAGE, "orders", "%s (the action is export --event ID)",
                               action ? "unknown action" : "no action given");
    hf_argument_t options[] = {{"--server", "HOLDFAST_SERVER", false, NULL},
                               {"--event", NULL, false, NULL}};
    switch (hf_arguments_read("orders export", argc, argv, 2, options, 2, NULL, 0, NULL)) {
    case HF_ARGUMENTS_HELP: return hf_command_usage(ORDERS_USAGE);
    case HF_ARGUMENTS_REFUSED: return HF_EXIT_USAGE;
    case HF_ARGUMENTS_OK: break;
    }
    if (!options[1].value)
        return hf_command_fail(HF_EXIT_USAGE, "orders export",
                               "--event is missing (the event "
                               "whose orders to export)");
    char server[HF_CLIENT_URL_SIZE_MAX];
    int refused = server_url("orders export", options[0].value, server, sizeof server);
    if (refused) return refused;
    char cursor[256] = "";
    do {
        int code = export_page(server, options[1].value, cursor, sizeof cursor);
        if (code != HF_EXIT_OK) return code;
    } while (*cursor);
    return fflush(stdout) == 0 && !ferror(stdout) ? HF_EXIT_OK : HF_EXIT_FAILURE;
}
