/* The command line (options.h). Parsing is two steps: gather every value as written, each with
 * where it came from (the option's name or the environment variable's, for the message), then
 * check each value in effect. So a value the command line overrides is never checked, and every
 * refusal has the same form: "holdfast: WHERE: what is wrong", one line, exit 2. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/options.h"
#include "engine/token.h"
#include "lib/log.h"
#include "store/backend.h"

#define COMMANDS "the commands are serve, event, orders, backup, check, --version and --help"
#define SEE_HELP "see holdfast serve --help"
#define LISTEN_EXAMPLE "for example 127.0.0.1:8080"
#define ORIGIN_EXAMPLE "for example https://tickets.example.com"
/* A value quoted in a message is cut here, so that the line stays readable. */
#define QUOTED_SIZE_MAX 100

typedef enum option_kind {
    OPTION_TEXT, /* --name VALUE, once */
    OPTION_FLAG, /* --name, no value */
    OPTION_LIST, /* --name VALUE, repeatable; the environment variable is comma-separated */
} option_kind_t;

typedef enum option_id {
    LISTEN,
    DATA,
    API_KEY,
    TOKEN_SECRET,
    WEBHOOK_SECRET,
    STORE,
    FINISHED_HOLDS,
    FINISHED_RIDES,
    CORS_ORIGIN,
    DEMO,
    LOG_LEVEL,
    ACCESS_LOG,
    NODE_ID,
    ADVERTISE,
    OPTION_COUNT
} option_id_t;

typedef struct option {
    const char *name;        /* as written on the command line */
    const char *environment; /* the variable it falls back on; NULL: none */
    option_kind_t kind;
} option_t;

static const option_t OPTIONS[OPTION_COUNT] = {
    [LISTEN] = {"--listen", NULL, OPTION_TEXT},
    [DATA] = {"--data", NULL, OPTION_TEXT},
    [API_KEY] = {"--api-key", "HOLDFAST_API_KEY", OPTION_TEXT},
    [TOKEN_SECRET] = {"--token-secret", "HOLDFAST_TOKEN_SECRET", OPTION_TEXT},
    [WEBHOOK_SECRET] = {"--webhook-secret", "HOLDFAST_WEBHOOK_SECRET", OPTION_TEXT},
    [STORE] = {"--store", "HOLDFAST_STORE", OPTION_TEXT},
    [FINISHED_HOLDS] = {"--finished-holds", "HOLDFAST_FINISHED_HOLDS", OPTION_TEXT},
    [FINISHED_RIDES] = {"--finished-rides", "HOLDFAST_FINISHED_RIDES", OPTION_TEXT},
    [CORS_ORIGIN] = {"--cors-origin", "HOLDFAST_CORS_ORIGINS", OPTION_LIST},
    [DEMO] = {"--demo", NULL, OPTION_FLAG},
    [LOG_LEVEL] = {"--log-level", "HOLDFAST_LOG_LEVEL", OPTION_TEXT},
    [ACCESS_LOG] = {"--access-log", "HOLDFAST_ACCESS_LOG", OPTION_FLAG},
    [NODE_ID] = {"--node-id", "HOLDFAST_NODE_ID", OPTION_TEXT},
    [ADVERTISE] = {"--advertise", "HOLDFAST_ADVERTISE", OPTION_TEXT},
};

/* One value as written, and the name to give in a message about it. */
typedef struct given {
    const char *value;  /* NULL: not given */
    const char *source; /* "--listen", or "HOLDFAST_API_KEY" when it came from there */
} given_t;

typedef struct gathered {
    given_t values[OPTION_COUNT];             /* for CORS_ORIGIN, the environment's whole list */
    const char *origins[HF_CORS_ORIGINS_MAX]; /* each --cors-origin */
    uint32_t origin_count;
} gathered_t;

void hf_command_line_usage(FILE *out) {
    fprintf(out,
            "usage: holdfast serve --listen HOST:PORT --data DIR [options]\n"
            "       holdfast event create FILE.json | event show ID  (through a server)\n"
            "       holdfast calendar create FILE.json | calendar show ID  (through a server)\n"
            "       holdfast orders export --event ID      (CSV, through a server)\n"
            "       holdfast backup --data DIR OUT.db      (a consistent copy, live)\n"
            "       holdfast check --data DIR              (every stored invariant, offline)\n"
            "       holdfast --version | --help            (each command takes --help)\n"
            "The commands through a server take --server [http://]HOST:PORT [HOLDFAST_SERVER]:\n"
            "http:// when no scheme is given (default http://127.0.0.1:8080).\n"
            "Options are written --name VALUE or --name=VALUE; the command line wins over the\n"
            "environment variable in brackets.\n"
            "  --listen HOST:PORT    where to accept connections (port 1 to 65535)\n"
            "  --data DIR            the directory for the store and the lock (created if\n"
            "                        missing, once the listening address is bound)\n"
            "  --api-key KEY         require Authorization: Bearer KEY on /v1/ [HOLDFAST_API_KEY]\n"
            "  --token-secret S      admission token secret, 16 to 1024 bytes (default: a random\n"
            "                        one kept in DIR/token_secret) [HOLDFAST_TOKEN_SECRET]\n"
            "  --webhook-secret S    payment webhook secret [HOLDFAST_WEBHOOK_SECRET]\n"
            "  --store URL           sqlite:PATH (default sqlite:DIR/holdfast.db) or\n"
            "                        postgres://USER@HOST:PORT/DB [HOLDFAST_STORE]\n"
            "  --finished-holds N    released and expired holds kept in memory, older ones are\n"
            "                        read back from the store (0 to %u, default %u)\n"
            "                        [HOLDFAST_FINISHED_HOLDS]\n"
            "  --finished-rides N    completed and cancelled rides kept in memory, older ones\n"
            "                        are read back from the store (0 to %u, default %u)\n"
            "                        [HOLDFAST_FINISHED_RIDES]\n"
            "  --cors-origin ORIGIN  answer CORS requests from ORIGIN, scheme://host[:port] as a\n"
            "                        browser sends it; repeatable, at most %u; none by default\n"
            "                        [HOLDFAST_CORS_ORIGINS, comma-separated]\n"
            "  --demo                create the demo event when missing\n"
            "  --log-level LEVEL     error, warn, info (default) or debug [HOLDFAST_LOG_LEVEL]\n"
            "  --access-log          log one line per request [HOLDFAST_ACCESS_LOG=1]\n"
            "  --node-id ID          this node's name among several on PostgreSQL (default:\n"
            "                        the listen address) [HOLDFAST_NODE_ID]\n"
            "  --advertise URL       how other nodes reach this one (default http://LISTEN)\n"
            "                        [HOLDFAST_ADVERTISE]\n"
            "  --help, -h            print this and exit\n"
            "  --version             print the version and exit\n"
            "The log is one JSON object per line on standard error. Exit codes: 0 done (serve:\n"
            "stopped cleanly), 1 failure (a start refused, a store failure, a check that found\n"
            "a broken invariant), 2 a refused option or usage.\n",
            HF_FINISHED_HOLDS_LIMIT, HF_FINISHED_HOLDS_MAX, HF_DISPATCH_FINISHED_RIDES_LIMIT,
            HF_DISPATCH_FINISHED_RIDES_MAX, (unsigned)HF_CORS_ORIGINS_MAX);
}

/* Writes "holdfast: " and the message as one line on standard error. */
__attribute__((format(printf, 1, 2))) static hf_command_t refuse(const char *format, ...) {
    char line[HF_LOG_LINE_SIZE_MAX];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(line, sizeof line, format, arguments);
    va_end(arguments);
    fprintf(stderr, "holdfast: %s\n", line);
    return HF_COMMAND_REFUSED;
}

/* length bytes of text in double quotes, cut to QUOTED_SIZE_MAX; values have no control
 * characters by then (check_printable). */
static const char *quoted(char out[QUOTED_SIZE_MAX + 8], const char *text, size_t length) {
    if (length > QUOTED_SIZE_MAX)
        snprintf(out, QUOTED_SIZE_MAX + 8, "\"%.*s...\"", QUOTED_SIZE_MAX, text);
    else snprintf(out, QUOTED_SIZE_MAX + 8, "\"%.*s\"", (int)length, text);
    return out;
}

static const char *environment(const char *name) {
    const char *value = name ? getenv(name) : NULL;
    return value && *value ? value : NULL;
}

/* The part of "--name=value" or "--name" before any "=", looked up. */
static int option_find(const char *argument, size_t name_length) {
    for (int id = 0; id < OPTION_COUNT; id++)
        if (strlen(OPTIONS[id].name) == name_length &&
            strncmp(OPTIONS[id].name, argument, name_length) == 0)
            return id;
    return -1;
}

static hf_command_t refuse_unknown(const char *argument, size_t name_length) {
    if (strncmp(argument, "--", 2) != 0) {
        char text[QUOTED_SIZE_MAX + 8];
        return refuse("unexpected argument %s (options begin with --; " SEE_HELP ")",
                      quoted(text, argument, strlen(argument)));
    }
    if (name_length > QUOTED_SIZE_MAX) name_length = QUOTED_SIZE_MAX;
    return refuse("unknown option %.*s (" SEE_HELP ")", (int)name_length, argument);
}

/* Records one value of option id; a value taken from the next argument may not look like an
 * option itself, since "--api-key --listen ..." is far more likely a forgotten value. */
static hf_command_t take(gathered_t *gathered, int id, const char *value, bool attached) {
    const option_t *option = &OPTIONS[id];
    if (!value || !*value || (!attached && strncmp(value, "--", 2) == 0))
        return refuse("%s needs a value", option->name);
    if (option->kind == OPTION_LIST) {
        if (gathered->origin_count == HF_CORS_ORIGINS_MAX)
            return refuse("%s: more than %u origins", option->name, (unsigned)HF_CORS_ORIGINS_MAX);
        gathered->origins[gathered->origin_count++] = value;
        return HF_COMMAND_SERVE;
    }
    if (gathered->values[id].value) return refuse("%s is given twice", option->name);
    gathered->values[id] = (given_t){value, option->name};
    return HF_COMMAND_SERVE;
}

/* The arguments after "serve", left to right. */
static hf_command_t gather_arguments(int argc, char **argv, gathered_t *gathered) {
    for (int i = 2; i < argc; i++) {
        const char *argument = argv[i];
        if (strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0) return HF_COMMAND_HELP;
        if (strcmp(argument, "--version") == 0) return HF_COMMAND_VERSION;
        const char *equals = strchr(argument, '=');
        size_t name_length = equals ? (size_t)(equals - argument) : strlen(argument);
        int id = strncmp(argument, "--", 2) == 0 ? option_find(argument, name_length) : -1;
        if (id < 0) return refuse_unknown(argument, name_length);
        hf_command_t result;
        if (OPTIONS[id].kind == OPTION_FLAG) {
            if (equals) return refuse("%s takes no value", OPTIONS[id].name);
            gathered->values[id] = (given_t){"", OPTIONS[id].name};
            continue;
        }
        if (equals) result = take(gathered, id, equals + 1, true);
        else result = take(gathered, id, i + 1 < argc ? argv[++i] : NULL, false);
        if (result != HF_COMMAND_SERVE) return result;
    }
    return HF_COMMAND_SERVE;
}

/* An option not on the command line falls back on its variable; an empty one counts as unset,
 * as a shell's `HOLDFAST_API_KEY= holdfast ...` means. */
static void gather_environment(gathered_t *gathered) {
    for (int id = 0; id < OPTION_COUNT; id++) {
        const char *value = environment(OPTIONS[id].environment);
        bool given = OPTIONS[id].kind == OPTION_LIST ? gathered->origin_count > 0
                                                     : gathered->values[id].value != NULL;
        if (value && !given) gathered->values[id] = (given_t){value, OPTIONS[id].environment};
    }
}

/* A control character in a value is a mistake (a secret with a newline would never match a
 * header), and would break the one-line messages. */
static hf_command_t control_character(const char *source, const char *value) {
    for (const unsigned char *c = (const unsigned char *)value; c && *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return refuse("%s: the value has a control character (byte %u)", source, *c);
    return HF_COMMAND_SERVE;
}

static hf_command_t check_printable(const gathered_t *gathered) {
    for (int id = 0; id < OPTION_COUNT; id++)
        if (control_character(gathered->values[id].source, gathered->values[id].value) !=
            HF_COMMAND_SERVE)
            return HF_COMMAND_REFUSED;
    for (uint32_t i = 0; i < gathered->origin_count; i++)
        if (control_character(OPTIONS[CORS_ORIGIN].name, gathered->origins[i]) != HF_COMMAND_SERVE)
            return HF_COMMAND_REFUSED;
    return HF_COMMAND_SERVE;
}

/* Digits only, no sign, no leading zero; at most 65536 (any larger is out of range too). */
static bool port_parse(const char *text, size_t length, long *port) {
    if (length == 0 || (text[0] == '0' && length > 1)) return false;
    long value = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        if (value <= 65535) value = value * 10 + (text[i] - '0');
    }
    *port = value;
    return true;
}

/* HOST:PORT, with [::1]:PORT (or ::1:PORT) for IPv6. A host name is resolved at start. */
static hf_command_t check_listen(const given_t *given, hf_command_line_t *line) {
    if (!given->value)
        return refuse("--listen is missing (HOST:PORT to listen on, " LISTEN_EXAMPLE ")");
    const char *text = given->value, *colon = strrchr(text, ':');
    const char *start = text, *end = colon;
    if (colon && *start == '[' && end - start >= 2 && end[-1] == ']') {
        start++;
        end--;
    }
    bool host_ok = colon && end > start;
    for (const char *c = start; host_ok && c < end; c++)
        host_ok = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:%",
                         *c) != NULL;
    long port;
    if (!host_ok || !port_parse(colon + 1, strlen(colon + 1), &port)) {
        char shown[QUOTED_SIZE_MAX + 8];
        return refuse("--listen: %s is not HOST:PORT (" LISTEN_EXAMPLE ")",
                      quoted(shown, text, strlen(text)));
    }
    if (port < 1 || port > 65535)
        return refuse("--listen: port %.10s%s is out of range (1 to 65535)", colon + 1,
                      strlen(colon + 1) > 10 ? "..." : "");
    if (end - start > HF_COMMAND_HOST_SIZE_MAX)
        return refuse("--listen: the host is longer than %d bytes", HF_COMMAND_HOST_SIZE_MAX);
    memcpy(line->host, start, (size_t)(end - start));
    line->host[end - start] = '\0';
    line->port = (int)port;
    return HF_COMMAND_SERVE;
}

/* --data, and the store URL: --store, or the SQLite file in the data directory. */
static hf_command_t check_data_and_store(const gathered_t *gathered, hf_command_line_t *line) {
    const char *data = gathered->values[DATA].value;
    if (!data) return refuse("--data is missing (the directory for the store and the lock)");
    if (strlen(data) > HF_COMMAND_DATA_SIZE_MAX)
        return refuse("--data: the path is longer than %d bytes", HF_COMMAND_DATA_SIZE_MAX);
    line->data_directory = data;
    const given_t *store = &gathered->values[STORE];
    if (!store->value) {
        snprintf(line->store_url, sizeof line->store_url, "sqlite:%s/holdfast.db", data);
        return HF_COMMAND_SERVE;
    }
    if (strlen(store->value) > HF_COMMAND_STORE_SIZE_MAX)
        return refuse("%s: the URL is longer than %d bytes", store->source,
                      HF_COMMAND_STORE_SIZE_MAX);
    /* The table of backends knows the schemes this build has: asked here, an unknown one is
     * an option error (exit 2) rather than a failed start. */
    char error[512];
    if (!hf_store_backend_find(store->value, error, sizeof error)) {
        const char *reason = strncmp(error, "store: ", 7) == 0 ? error + 7 : error;
        return refuse("%s: %s", store->source, reason);
    }
    snprintf(line->store_url, sizeof line->store_url, "%s", store->value);
    return HF_COMMAND_SERVE;
}

/* A count from 0 to limit into *count; not given: fallback. */
static hf_command_t check_count(const given_t *given, uint32_t fallback, uint32_t limit,
                                uint32_t *count) {
    *count = fallback;
    if (!given->value) return HF_COMMAND_SERVE;
    const char *text = given->value;
    unsigned long long value = 0;
    bool ok = *text != '\0';
    for (const char *c = text; ok && *c; c++) {
        ok = *c >= '0' && *c <= '9';
        if (ok && value <= limit) value = value * 10 + (unsigned)(*c - '0');
    }
    if (!ok || value > limit) {
        char shown[QUOTED_SIZE_MAX + 8];
        return refuse("%s: %s is not a count from 0 to %u", given->source,
                      quoted(shown, text, strlen(text)), limit);
    }
    *count = (uint32_t)value;
    return HF_COMMAND_SERVE;
}

/* --finished-holds and --finished-rides. */
static hf_command_t check_finished(const gathered_t *gathered, hf_command_line_t *line) {
    if (check_count(&gathered->values[FINISHED_HOLDS], HF_FINISHED_HOLDS_MAX,
                    HF_FINISHED_HOLDS_LIMIT, &line->finished_holds_max) != HF_COMMAND_SERVE)
        return HF_COMMAND_REFUSED;
    return check_count(&gathered->values[FINISHED_RIDES], HF_DISPATCH_FINISHED_RIDES_MAX,
                       HF_DISPATCH_FINISHED_RIDES_LIMIT, &line->finished_rides_max);
}

/* Why length bytes of text are not an origin as a browser writes it in its Origin header
 * (scheme://host[:port], lower case, no default port, nothing after), or NULL. */
static const char *origin_problem(const char *text, size_t length) {
    if (length == 1 && text[0] == '*')
        return "is not accepted: name each origin, since a wildcard would let any web page "
               "call the API from its visitors' browsers";
    size_t scheme = 0;
    if (length >= 8 && strncmp(text, "https://", 8) == 0) scheme = 8;
    else if (length >= 7 && strncmp(text, "http://", 7) == 0) scheme = 7;
    if (scheme == 0) {
        const char *separator = strstr(text, "://");
        return separator && (size_t)(separator - text) < length
                   ? "is not an origin: the scheme must be http or https"
                   : "is not an origin: write scheme://host[:port], " ORIGIN_EXAMPLE;
    }
    const char *host = text + scheme, *end = text + length, *c = host;
    bool literal = *c == '['; /* an IPv6 address: [hex:hex...] */
    for (c += literal ? 1 : 0; c < end && (literal ? *c != ']' : *c != ':' && *c != '/'); c++) {
        if (*c >= 'A' && *c <= 'Z')
            return "is not an origin: write the host in lower case, "
                   "as browsers send it";
        if (!strchr(literal ? "0123456789abcdef:." : "abcdefghijklmnopqrstuvwxyz0123456789.-", *c))
            break;
    }
    if (literal && c < end && *c == ']') c++;
    bool empty = c == host + (literal ? 2 : 0);
    if (empty || (literal && c[-1] != ']') || (c < end && *c != ':' && *c != '/'))
        return "is not an origin: write scheme://host[:port], " ORIGIN_EXAMPLE;
    if (c - host > 253) return "is not an origin: the host is longer than 253 bytes";
    if (c < end && *c == ':') {
        const char *digits = ++c;
        while (c < end && *c >= '0' && *c <= '9') c++;
        long port;
        if (!port_parse(digits, (size_t)(c - digits), &port) || port < 1 || port > 65535)
            return "is not an origin: the port must be a number from 1 to 65535";
        if (port == (scheme == 7 ? 80 : 443))
            return "is not an origin: leave out the scheme's default port, as browsers do";
    }
    if (c < end)
        return "is not an origin: nothing may follow the host and port "
               "(no path, no trailing slash), " ORIGIN_EXAMPLE;
    return NULL;
}

/* Checks one origin and adds it to the list (once). */
static hf_command_t origin_add(const char *source, const char *text, size_t length,
                               hf_command_line_t *line) {
    if (length == 0) return refuse("%s: an empty origin between commas", source);
    const char *problem =
        length > HF_CORS_ORIGIN_SIZE_MAX
            ? "is not an origin: it is longer than the longest one (scheme, 253-byte host, port)"
            : origin_problem(text, length);
    if (problem) {
        char shown[QUOTED_SIZE_MAX + 8];
        return refuse("%s: %s %s", source, quoted(shown, text, length), problem);
    }
    for (uint32_t i = 0; i < line->cors_origin_count; i++)
        if (strlen(line->cors_origins[i]) == length &&
            strncmp(line->cors_origins[i], text, length) == 0)
            return HF_COMMAND_SERVE;
    if (line->cors_origin_count == HF_CORS_ORIGINS_MAX)
        return refuse("%s: more than %u origins", source, (unsigned)HF_CORS_ORIGINS_MAX);
    char *copy = line->cors_origin_text[line->cors_origin_count];
    memcpy(copy, text, length);
    copy[length] = '\0';
    line->cors_origins[line->cors_origin_count++] = copy;
    return HF_COMMAND_SERVE;
}

/* Each --cors-origin, or else the environment's list, split at commas (spaces around them
 * are allowed, as in "https://a.example, https://b.example"). */
static hf_command_t check_origins(const gathered_t *gathered, hf_command_line_t *line) {
    line->cors_origin_count = 0;
    for (uint32_t i = 0; i < gathered->origin_count; i++)
        if (origin_add(OPTIONS[CORS_ORIGIN].name, gathered->origins[i],
                       strlen(gathered->origins[i]), line) != HF_COMMAND_SERVE)
            return HF_COMMAND_REFUSED;
    const given_t *list = &gathered->values[CORS_ORIGIN];
    for (const char *item = list->value; item != NULL;) {
        const char *comma = strchr(item, ',');
        const char *end = comma ? comma : item + strlen(item);
        while (item < end && (*item == ' ' || *item == '\t')) item++;
        while (end > item && (end[-1] == ' ' || end[-1] == '\t')) end--;
        if (origin_add(list->source, item, (size_t)(end - item), line) != HF_COMMAND_SERVE)
            return HF_COMMAND_REFUSED;
        item = comma ? comma + 1 : NULL;
    }
    return HF_COMMAND_SERVE;
}

/* --log-level: one of the level words; --access-log: the flag, or its variable's yes or no. */
static hf_command_t check_log(const gathered_t *gathered, hf_command_line_t *line) {
    const given_t *level = &gathered->values[LOG_LEVEL];
    line->log_level = HF_LOG_INFO;
    if (level->value && !hf_log_level_parse(level->value, &line->log_level)) {
        char shown[QUOTED_SIZE_MAX + 8];
        return refuse("%s: %s is not a level (error, warn, info or debug)", level->source,
                      quoted(shown, level->value, strlen(level->value)));
    }
    const given_t *access = &gathered->values[ACCESS_LOG];
    const char *value = access->value;
    if (!value) return HF_COMMAND_SERVE;
    if (*value == '\0' || strcmp(value, "1") == 0 || strcmp(value, "true") == 0 ||
        strcmp(value, "yes") == 0 || strcmp(value, "on") == 0) {
        line->access_log = true;
        return HF_COMMAND_SERVE;
    }
    if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0 || strcmp(value, "no") == 0 ||
        strcmp(value, "off") == 0)
        return HF_COMMAND_SERVE;
    char shown[QUOTED_SIZE_MAX + 8];
    return refuse("%s: %s is not a yes or no (1, true, yes, on; 0, false, no, off)", access->source,
                  quoted(shown, value, strlen(value)));
}

/* --node-id and --advertise (API.md section 11), defaulting to the listen address. */
static hf_command_t check_node(const gathered_t *gathered, hf_command_line_t *line) {
    const given_t *node_id = &gathered->values[NODE_ID], *advertise = &gathered->values[ADVERTISE];
    if (node_id->value &&
        (!*node_id->value || strlen(node_id->value) > HF_CLUSTER_NODE_ID_SIZE_MAX))
        return refuse("%s: a node id is 1 to %d bytes", node_id->source,
                      HF_CLUSTER_NODE_ID_SIZE_MAX);
    if (advertise->value && (strncmp(advertise->value, "http://", 7) != 0 ||
                             strlen(advertise->value) > HF_CLUSTER_ADDRESS_SIZE_MAX))
        return refuse("%s: an http:// URL of at most %d bytes, as http://10.0.0.5:8080",
                      advertise->source, HF_CLUSTER_ADDRESS_SIZE_MAX);
    bool v6 = strchr(line->host, ':') != NULL;
    if (node_id->value) snprintf(line->node_id, sizeof line->node_id, "%s", node_id->value);
    else
        snprintf(line->node_id, sizeof line->node_id, v6 ? "[%s]:%d" : "%s:%d", line->host,
                 line->port);
    if (advertise->value) snprintf(line->advertise, sizeof line->advertise, "%s", advertise->value);
    else
        snprintf(line->advertise, sizeof line->advertise, v6 ? "http://[%s]:%d" : "http://%s:%d",
                 line->host, line->port);
    return HF_COMMAND_SERVE;
}

/* --token-secret: its bytes sign the admission tokens, so a short one could be guessed from
 * a single token offline; HMAC takes any longer one (token.h), up to a bound that catches a
 * file pasted whole. The value is never quoted. */
static hf_command_t check_token_secret(const given_t *given, hf_command_line_t *line) {
    line->token_secret = given->value;
    if (!given->value) return HF_COMMAND_SERVE;
    size_t length = strlen(given->value);
    if (length < HF_TOKEN_SECRET_SIZE_MIN)
        return refuse("%s: the secret is %zu bytes long, shorter than the %d bytes needed",
                      given->source, length, HF_TOKEN_SECRET_SIZE_MIN);
    if (length > HF_TOKEN_SECRET_SIZE_MAX)
        return refuse("%s: the secret is %zu bytes long, longer than the %d bytes allowed",
                      given->source, length, HF_TOKEN_SECRET_SIZE_MAX);
    return HF_COMMAND_SERVE;
}

/* The command, then `serve`'s options. */
hf_command_t hf_command_line_parse(int argc, char **argv, hf_command_line_t *line) {
    memset(line, 0, sizeof *line);
    if (argc < 2) return refuse("no command given (" COMMANDS ")");
    const char *command = argv[1];
    if (strcmp(command, "--version") == 0) return HF_COMMAND_VERSION;
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0) return HF_COMMAND_HELP;
    if (strcmp(command, "serve") != 0) {
        char shown[QUOTED_SIZE_MAX + 8];
        return refuse("unknown command %s (" COMMANDS ")", quoted(shown, command, strlen(command)));
    }
    gathered_t gathered = {0};
    hf_command_t result = gather_arguments(argc, argv, &gathered);
    if (result != HF_COMMAND_SERVE) return result;
    gather_environment(&gathered);
    if (check_printable(&gathered) != HF_COMMAND_SERVE ||
        check_listen(&gathered.values[LISTEN], line) != HF_COMMAND_SERVE ||
        check_data_and_store(&gathered, line) != HF_COMMAND_SERVE ||
        check_finished(&gathered, line) != HF_COMMAND_SERVE ||
        check_origins(&gathered, line) != HF_COMMAND_SERVE ||
        check_log(&gathered, line) != HF_COMMAND_SERVE ||
        check_token_secret(&gathered.values[TOKEN_SECRET], line) != HF_COMMAND_SERVE)
        return HF_COMMAND_REFUSED;
    line->api_key = gathered.values[API_KEY].value;
    line->webhook_secret = gathered.values[WEBHOOK_SECRET].value;
    line->demo = gathered.values[DEMO].value != NULL;
    return check_node(&gathered, line);
}
