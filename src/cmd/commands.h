/* The commands beside `serve` (docs/OPERATIONS.md): each in a file of its own, sharing the
 * argument reader below.
 *   client.c   event create FILE.json, event show ID, orders export --event ID: through a
 *              running server (--server URL, the API key from HOLDFAST_API_KEY)
 *   backup.c   backup --data DIR OUT.db: a consistent copy of a live store (SQLite's online
 *              backup API)
 *   check.c    check --data DIR: every invariant of the stored state, offline
 *   http_client.c  the small blocking HTTP/1.1 client client.c talks through
 * Exit codes, the same for all: 0 done, 1 failure (said on standard error), 2 usage (one line
 * on standard error naming the argument, as serve's refusals). --help prints the command's
 * usage on standard output and exits 0. */
#ifndef HF_CMD_COMMANDS_H
#define HF_CMD_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define HF_EXIT_OK 0
#define HF_EXIT_FAILURE 1
#define HF_EXIT_USAGE 2

/* Runs argv[1]'s command when it is one of these: true, with its exit code in *code. */
bool hf_command_run(int argc, char **argv, int *code);

int hf_command_event(int argc, char **argv);    /* argv[0] is "event" */
int hf_command_calendar(int argc, char **argv); /* argv[0] is "calendar" */
int hf_command_orders(int argc, char **argv);   /* "orders" */
int hf_command_backup(int argc, char **argv);   /* "backup" */
int hf_command_check(int argc, char **argv);    /* "check" */

/* ---- arguments (commands.c) ---- */

/* One option of a command: --name VALUE (or --name=VALUE), or a flag; falling back on an
 * environment variable when not given. value is set by hf_arguments_read. */
typedef struct hf_argument {
    const char *name;
    const char *environment; /* NULL: none */
    bool flag;
    const char *value; /* NULL: not given; a flag given: "" */
} hf_argument_t;

typedef enum hf_arguments_result {
    HF_ARGUMENTS_OK,
    HF_ARGUMENTS_HELP,    /* --help or -h: print the usage, exit 0 */
    HF_ARGUMENTS_REFUSED, /* a line is on standard error: exit 2 */
} hf_arguments_result_t;

/* Reads argv[first..argc) into options and exactly positional_count positional arguments
 * (named in positional_names for the message). command names the command in messages
 * ("holdfast: orders export: ..."). */
hf_arguments_result_t hf_arguments_read(const char *command, int argc, char **argv, int first,
                                        hf_argument_t *options, size_t option_count,
                                        const char **positional, size_t positional_count,
                                        const char *const *positional_names);

/* "holdfast: COMMAND: message" on standard error; returns code. */
int hf_command_fail(int code, const char *command, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The SQLite file of --data DIR (DIR/holdfast.db), else of --store sqlite:PATH, into
 * path; HF_EXIT_OK, or HF_EXIT_USAGE after saying why. */
int hf_command_store_path(const char *command, const char *data, const char *store, char *path,
                          size_t size);

/* Prints text (a usage) to standard output; 0, or 1 when it could not be written. */
int hf_command_usage(const char *text);

#endif
