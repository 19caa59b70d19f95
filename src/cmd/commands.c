/* The commands' dispatch and their shared argument reader (commands.h). */
#include "cmd/commands.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command_t;

static const command_t COMMANDS[] = {
    {"event", hf_command_event},   {"calendar", hf_command_calendar}, {"orders", hf_command_orders},
    {"backup", hf_command_backup}, {"check", hf_command_check},
};

bool hf_command_run(int argc, char **argv, int *code) {
    if (argc < 2) return false;
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0) {
            *code = COMMANDS[i].run(argc - 1, argv + 1);
            return true;
        }
    return false;
}

int hf_command_fail(int code, const char *command, const char *format, ...) {
    char text[HF_LOG_LINE_SIZE_MAX];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    fprintf(stderr, "holdfast: %s: %s\n", command, text);
    return code;
}

int hf_command_usage(const char *text) {
    fputs(text, stdout);
    return fflush(stdout) == 0 && !ferror(stdout) ? HF_EXIT_OK : HF_EXIT_FAILURE;
}

static hf_argument_t *option_find(hf_argument_t *options, size_t count, const char *argument,
                                  size_t length) {
    for (size_t i = 0; i < count; i++)
        if (strlen(options[i].name) == length && strncmp(options[i].name, argument, length) == 0)
            return &options[i];
    return NULL;
}

/* One "--name", "--name=value" or "--name value" at argv[*i]. */
static hf_arguments_result_t option_read(const char *command, int argc, char **argv, int *i,
                                         hf_argument_t *options, size_t count) {
    const char *argument = argv[*i];
    const char *equals = strchr(argument, '=');
    size_t length = equals ? (size_t)(equals - argument) : strlen(argument);
    hf_argument_t *option = option_find(options, count, argument, length);
    if (!option) {
        hf_command_fail(HF_EXIT_USAGE, command, "unknown option %.*s (see holdfast %s --help)",
                        (int)(length > 100 ? 100 : length), argument, command);
        return HF_ARGUMENTS_REFUSED;
    }
    if (option->value) {
        hf_command_fail(HF_EXIT_USAGE, command, "%s is given twice", option->name);
        return HF_ARGUMENTS_REFUSED;
    }
    if (option->flag) {
        if (equals) {
            hf_command_fail(HF_EXIT_USAGE, command, "%s takes no value", option->name);
            return HF_ARGUMENTS_REFUSED;
        }
        option->value = "";
        return HF_ARGUMENTS_OK;
    }
    const char *value = equals ? equals + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!value || !*value || (!equals && strncmp(value, "--", 2) == 0)) {
        hf_command_fail(HF_EXIT_USAGE, command, "%s needs a value", option->name);
        return HF_ARGUMENTS_REFUSED;
    }
    option->value = value;
    return HF_ARGUMENTS_OK;
}

hf_arguments_result_t hf_arguments_read(const char *command, int argc, char **argv, int first,
                                        hf_argument_t *options, size_t option_count,
                                        const char **positional, size_t positional_count,
                                        const char *const *positional_names) {
    size_t found = 0;
    for (size_t k = 0; k < option_count; k++) options[k].value = NULL;
    for (int i = first; i < argc; i++) {
        const char *argument = argv[i];
        if (strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0)
            return HF_ARGUMENTS_HELP;
        if (strncmp(argument, "--", 2) == 0) {
            hf_arguments_result_t result = option_read(command, argc, argv, &i, options,
                                                       option_count);
            if (result != HF_ARGUMENTS_OK) return result;
            continue;
        }
        if (found == positional_count) {
            hf_command_fail(HF_EXIT_USAGE, command,
                            "unexpected argument \"%.100s\" (see "
                            "holdfast %s --help)",
                            argument, command);
            return HF_ARGUMENTS_REFUSED;
        }
        positional[found++] = argument;
    }
    if (found < positional_count) {
        hf_command_fail(HF_EXIT_USAGE, command, "%s is missing (see holdfast %s --help)",
                        positional_names[found], command);
        return HF_ARGUMENTS_REFUSED;
    }
    /* What the command line left unset falls back on its variable (empty counts as unset). */
    for (size_t k = 0; k < option_count; k++) {
        const char *value = options[k].environment ? getenv(options[k].environment) : NULL;
        if (!options[k].value && value && *value) options[k].value = value;
    }
    return HF_ARGUMENTS_OK;
}

int hf_command_store_path(const char *command, const char *data, const char *store, char *path,
                          size_t size) {
    if (store && !data) {
        if (strncmp(store, "sqlite:", 7) != 0 || store[7] == '\0')
            return hf_command_fail(HF_EXIT_USAGE, command,
                                   "--store: \"%.100s\" is not "
                                   "sqlite:PATH (the only store these tools read)",
                                   store);
        if ((size_t)snprintf(path, size, "%s", store + 7) >= size)
            return hf_command_fail(HF_EXIT_USAGE, command, "--store: the path is too long");
        return HF_EXIT_OK;
    }
    if (!data)
        return hf_command_fail(HF_EXIT_USAGE, command,
                               "--data is missing (the server's data "
                               "directory; or --store sqlite:PATH)");
    if ((size_t)snprintf(path, size, "%s/holdfast.db", data) >= size)
        return hf_command_fail(HF_EXIT_USAGE, command, "--data: the path is too long");
    return HF_EXIT_OK;
}
