/*
 * options.h — a subcommand's options declared once, as a table that the parser, `--help` and the
 * reference (`tracekit help --markdown` > docs/cli.md) all read.
 *
 * A subcommand declares
 *
 *     static const tk_cli_option options[] = {
 *         TK_OPT_SECTION("tree options"),
 *         TK_OPT_VALUE(OPT_BY, "--by", NULL, "thread|process|all", "one tree per thread (default), …"),
 *         TK_OPT_FLAG(OPT_JSON, "--json", NULL, "JSON (schema: docs/json-tree.md)"),
 *         TK_OPT_INCLUDE(tk_analysis_options),   // the shared analysis options
 *         TK_OPT_END};
 *     const tk_cli_command tk_cli_command_tree = {"tree", "tracekit tree [options] FILE", "about…", options};
 *
 * and parses with tk_cli_parse(&tk_cli_command_tree, argc, argv, 1, handler, ctx, NULL), where the
 * handler switches on the entry's id (and hands ids it does not know to tk_analysis_handle). The
 * table object must be called tk_cli_command_NAME: main.c finds it by that name (a weak reference,
 * so a command without one still links) for `tracekit help --markdown`.
 *
 * The parser, for every argument in turn:
 *   - a table entry's name or alias: a FLAG is exactly that word; a VALUE takes the next argument,
 *     or, written NAME=VALUE, the rest of the word (the alias only as a separate word: -o FILE);
 *     a missing value is "CMD: NAME needs a value" (exit status 2);
 *   - "--": the next argument is an operand even if it starts with '-' (or, with TK_CLI_STOP, the
 *     options end there); with TK_CLI_NO_DASHDASH it is an ordinary (unknown) option;
 *   - "-" alone and words not starting with '-' are operands, given to the handler with the table's
 *     TK_CLI_OPERAND entry (its id); a table without one rejects operands (an OPERAND entry with help
 *     NULL is left out of --help and the docs: a handler that words the refusal itself);
 *   - anything else: "CMD: unknown option 'X' (see tracekit CMD --help)", exit status 2.
 * An option given twice is handed over twice (a value option's last value usually wins; TK_CLI_LIST
 * options, documented as repeatable, collect them). `--help`/`-h` anywhere before "--" prints the
 * help and ends parsing (or, with TK_CLI_HELP_IN_PLACE, only where an option may stand).
 *
 * A new subcommand declares its table the same way; check a change to one with scripts/cli_compare.sh
 * against the previous binary, run tests/cli/cli_docs.sh and regenerate docs/cli.md
 * (`build/tracekit help --markdown > docs/cli.md`).
 */
#ifndef TK_CLI_OPTIONS_H
#define TK_CLI_OPTIONS_H

#include <stdio.h>

typedef enum tk_cli_kind {
	TK_CLI_END = 0, /* ends a table */
	TK_CLI_FLAG,    /* NAME (or ALIAS): no value */
	TK_CLI_VALUE,   /* NAME VALUE, NAME=VALUE or ALIAS VALUE */
	TK_CLI_LIST,    /* a VALUE that may be repeated, each value kept (--symbols A --symbols B) */
	TK_CLI_OPERAND, /* documents the operands (FILE, ADDRESS…: NAME) and gives them their id */
	TK_CLI_SECTION, /* a heading ("filters"); help, if any, is a line under it */
	TK_CLI_TEXT,    /* a note inside a section (help), not an option */
	TK_CLI_INCLUDE, /* the rows of another table (include), e.g. the shared analysis options */
} tk_cli_kind;

typedef struct tk_cli_option {
	tk_cli_kind kind;
	int id;                              /* what the handler switches on; ids of shared tables are >= 1000 */
	const char *name;                    /* "--by", atos's "-arch", an operand's "FILE" */
	const char *alias;                   /* another spelling ("-o" for "--output"), or NULL */
	const char *arg;                     /* the value's name in the help ("thread|process|all"); VALUE/LIST only */
	const char *help;                    /* one paragraph; the help printer wraps it */
	const struct tk_cli_option *include; /* TK_CLI_INCLUDE */
} tk_cli_option;

/* The rows of a table (the macros fill every field, as -Wextra wants). */
#define TK_OPT_FLAG(id, name, alias, help)                                                                             \
	{                                                                                                              \
		TK_CLI_FLAG, id, name, alias, NULL, help, NULL                                                         \
	}
#define TK_OPT_VALUE(id, name, alias, arg, help)                                                                       \
	{                                                                                                              \
		TK_CLI_VALUE, id, name, alias, arg, help, NULL                                                         \
	}
#define TK_OPT_LIST(id, name, alias, arg, help)                                                                        \
	{                                                                                                              \
		TK_CLI_LIST, id, name, alias, arg, help, NULL                                                          \
	}
#define TK_OPT_OPERAND(id, name, help)                                                                                 \
	{                                                                                                              \
		TK_CLI_OPERAND, id, name, NULL, NULL, help, NULL                                                       \
	}
#define TK_OPT_SECTION(title)                                                                                          \
	{                                                                                                              \
		TK_CLI_SECTION, 0, title, NULL, NULL, NULL, NULL                                                       \
	}
#define TK_OPT_TEXT(help)                                                                                              \
	{                                                                                                              \
		TK_CLI_TEXT, 0, NULL, NULL, NULL, help, NULL                                                           \
	}
#define TK_OPT_INCLUDE(table)                                                                                          \
	{                                                                                                              \
		TK_CLI_INCLUDE, 0, NULL, NULL, NULL, NULL, table                                                       \
	}
#define TK_OPT_END                                                                                                     \
	{                                                                                                              \
		TK_CLI_END, 0, NULL, NULL, NULL, NULL, NULL                                                            \
	}

enum {
	TK_CLI_STOP = 1,          /* the first operand or "--" ends the options (atos, demangle) */
	TK_CLI_NO_DASHDASH = 2,   /* "--" is not special */
	TK_CLI_HELP_IN_PLACE = 4, /* --help / -h only where an option stands (not as a value or operand) */
	TK_CLI_DASH_DIGIT = 8,    /* "-1…" is an operand, not an option (atos's negative offsets) */
};

typedef struct tk_cli_command {
	const char *name;  /* "tree" */
	const char *usage; /* "tracekit tree [options] FILE"; several forms on separate lines */
	const char *about; /* paragraphs after the usage, as written (lines end with \n) */
	const tk_cli_option *options;
	const char *footer;         /* paragraphs after the options, as written, or NULL */
	unsigned flags;             /* TK_CLI_STOP … */
	int column;                 /* where option help starts in --help (0: 24) */
	const char *(*table)(void); /* text made at run time, printed as written after the footer
	                             * (convert's list of formats), or NULL */
} tk_cli_command;

/* Called for every option and operand in order. o is the table entry (for operands: the
 * TK_CLI_OPERAND entry), value its value (the operand itself; NULL for a FLAG), spelling the word
 * typed (an operand after "--": "--"). Returns 0 to go on, or -1 after printing why not (the parse
 * then ends with exit status 2). */
typedef int (*tk_cli_handler)(void *ctx, const tk_cli_option *o, const char *value, const char *spelling);

/* Parse argv[first..argc-1]. Returns 0 when every argument was handled, -1 when the help was
 * printed (the command then exits 0), 2 after a usage error (printed). With TK_CLI_STOP, *rest
 * receives the index of the first operand (argc if none) and operands are not handed over. */
int tk_cli_parse(const tk_cli_command *c, int argc, char **argv, int first, tk_cli_handler h, void *ctx, int *rest);

/* One argument at argv[*i] against table (for subcommands still parsing with a loop of their own):
 * 1 if it was one of the table's options and was handled (*i advanced), 0 if not, -1 after an
 * error (printed). Operands are not taken. */
int tk_cli_parse_one(const char *cmd, const tk_cli_option *table, int argc, char **argv, int *i, tk_cli_handler h,
                     void *ctx);

/* `--help`: the usage, about, each section's rows (wrapped at 100 columns) and the footer. */
void tk_cli_help(const tk_cli_command *c, FILE *out);
/* The command's section of docs/cli.md (summary: the command table's one-line summary). Where the
 * table includes shared, shared_link (a Markdown line) stands for its rows, which
 * tk_cli_markdown_table writes once. */
void tk_cli_markdown(const tk_cli_command *c, const char *summary, const tk_cli_option *shared, const char *shared_link,
                     FILE *out);
void tk_cli_markdown_table(const tk_cli_option *t, FILE *out);

#endif
