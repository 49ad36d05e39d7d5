/*
 * The one option parser and help printer of the subcommands; see options.h.
 */
#include <string.h>

#include "cli.h"
#include "options.h"

enum { WIDTH = 106 }; /* --help lines are wrapped to this many columns (the hand-written help's width) */

/* Columns of n bytes of UTF-8: continuation bytes take none. */
static size_t columns(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* The entry NAME (or NAME=…, *eq set) names in table, depth first through includes; the first wins. */
static const tk_cli_option *find(const tk_cli_option *t, const char *word, int *eq)
{
	for (; t && t->kind != TK_CLI_END; t++) {
		if (t->kind == TK_CLI_INCLUDE) {
			const tk_cli_option *o = find(t->include, word, eq);
			if (o)
				return o;
			continue;
		}
		if (t->kind != TK_CLI_FLAG && t->kind != TK_CLI_VALUE && t->kind != TK_CLI_LIST)
			continue;
		if (strcmp(word, t->name) == 0 || (t->alias && strcmp(word, t->alias) == 0)) {
			*eq = 0;
			return t;
		}
		size_t n = strlen(t->name);
		if (t->kind != TK_CLI_FLAG && strncmp(word, t->name, n) == 0 && word[n] == '=') {
			*eq = 1;
			return t;
		}
	}
	return NULL;
}

static const tk_cli_option *find_operand(const tk_cli_option *t)
{
	for (; t && t->kind != TK_CLI_END; t++) {
		if (t->kind == TK_CLI_OPERAND)
			return t;
		if (t->kind == TK_CLI_INCLUDE) {
			const tk_cli_option *o = find_operand(t->include);
			if (o)
				return o;
		}
	}
	return NULL;
}

/* argv[*i] is an option of table: hand it over. 1 done, 0 not one, -1 error (printed). */
static int take(const char *cmd, const tk_cli_option *table, int argc, char **argv, int *i, tk_cli_handler h, void *ctx)
{
	const char *word = argv[*i], *value = NULL;
	int eq;
	const tk_cli_option *o = find(table, word, &eq);
	if (!o)
		return 0;
	if (o->kind == TK_CLI_FLAG) {
		++*i;
	} else if (eq) {
		value = word + strlen(o->name) + 1;
		++*i;
	} else if (*i + 1 >= argc) {
		tk_cli_usage(cmd, "%s needs a value", word);
		return -1;
	} else {
		value = argv[*i + 1];
		*i += 2;
	}
	return h(ctx, o, value, word) < 0 ? -1 : 1;
}

int tk_cli_parse_one(const char *cmd, const tk_cli_option *table, int argc, char **argv, int *i, tk_cli_handler h,
                     void *ctx)
{
	return take(cmd, table, argc, argv, i, h, ctx);
}

static int is_help(const char *s)
{
	return strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0;
}

int tk_cli_parse(const tk_cli_command *c, int argc, char **argv, int first, tk_cli_handler h, void *ctx, int *rest)
{
	if (!(c->flags & TK_CLI_HELP_IN_PLACE) && tk_cli_wants_help(argc, argv)) {
		tk_cli_help(c, stdout);
		return -1;
	}
	const tk_cli_option *operand = find_operand(c->options);
	int i = first;
	while (i < argc) {
		const char *arg = argv[i], *spelling = arg;
		if ((c->flags & TK_CLI_HELP_IN_PLACE) && is_help(arg)) {
			tk_cli_help(c, stdout);
			return -1;
		}
		int r = take(c->name, c->options, argc, argv, &i, h, ctx);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		int is_operand = 0;
		if (strcmp(arg, "--") == 0 && !(c->flags & TK_CLI_NO_DASHDASH)) {
			if (c->flags & TK_CLI_STOP) {
				*rest = i + 1;
				return 0;
			}
			if (i + 1 < argc)
				arg = argv[++i], is_operand = 1;
		} else {
			is_operand = arg[0] != '-' || !arg[1] ||
			             ((c->flags & TK_CLI_DASH_DIGIT) && arg[1] >= '0' && arg[1] <= '9');
		}
		if (!is_operand)
			return tk_cli_usage(c->name, "unknown option '%s'", arg);
		if (c->flags & TK_CLI_STOP) {
			*rest = i;
			return 0;
		}
		if (!operand)
			return tk_cli_usage(c->name, "unexpected argument '%s'", arg);
		if (h(ctx, operand, arg, spelling) < 0)
			return 2;
		i++;
	}
	if (c->flags & TK_CLI_STOP)
		*rest = argc;
	return 0;
}

/* ---- help ---- */

/* "-o, --output PATH": the short spelling first. */
static size_t spell(const tk_cli_option *o, char *buf, size_t cap)
{
	const char *a = o->name, *b = o->alias;
	if (b && b[1] != '-' && a[1] == '-') /* alias -o, name --output */
		a = o->alias, b = o->name;
	int n = snprintf(buf, cap, "%s%s%s%s%s", a, b ? ", " : "", b ? b : "",
	                 (o->kind == TK_CLI_VALUE || o->kind == TK_CLI_LIST) && o->arg ? " " : "",
	                 (o->kind == TK_CLI_VALUE || o->kind == TK_CLI_LIST) && o->arg ? o->arg : "");
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

/* Print text from column col (the cursor is there), wrapping at WIDTH to column indent. */
static void wrap(FILE *out, const char *text, size_t col, size_t indent)
{
	const char *p = text;
	int first = 1;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t w = strcspn(p, " "), cw = columns(p, w);
		if (!first && col + 1 + cw > WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, w, out);
		col += cw;
		p += w;
		first = 0;
	}
	fputc('\n', out);
}

static void help_rows(const tk_cli_option *t, FILE *out, size_t column, int *started)
{
	for (; t && t->kind != TK_CLI_END; t++) {
		char names[256];
		switch (t->kind) {
		case TK_CLI_INCLUDE: help_rows(t->include, out, column, started); break;
		case TK_CLI_SECTION:
			snprintf(names, sizeof names, "%s:", t->name);
			fputc('\n', out);
			wrap(out, names, 0, 0);
			if (t->help) {
				fputs("  ", out);
				wrap(out, t->help, 2, 2);
			}
			*started = 1;
			break;
		case TK_CLI_TEXT:
			if (!*started)
				fputc('\n', out), *started = 1;
			fputs("  ", out);
			wrap(out, t->help, 2, 2);
			break;
		default: {
			if (t->kind == TK_CLI_OPERAND && !t->help) /* undocumented: operands the handler refuses */
				break;
			if (!*started)
				fputc('\n', out), *started = 1;
			size_t n = spell(t, names, sizeof names);
			fprintf(out, "  %s", names);
			size_t col = 2 + columns(names, n);
			if (col + 1 < column) {
				fprintf(out, "%*s", (int)(column - col), "");
				col = column;
			} else {
				fputs("  ", out);
				col += 2;
			}
			wrap(out, t->help ? t->help : "", col, column);
		}
		}
	}
}

void tk_cli_help(const tk_cli_command *c, FILE *out)
{
	const char *u = c->usage;
	for (int first = 1; *u; first = 0) {
		size_t n = strcspn(u, "\n");
		fprintf(out, "%s%.*s\n", first ? "usage: " : "       ", (int)n, u);
		u += n + (u[n] == '\n');
	}
	if (c->about)
		fprintf(out, "\n%s", c->about);
	int started = 0;
	help_rows(c->options, out, c->column ? (size_t)c->column : 24, &started);
	if (c->footer)
		fprintf(out, "\n%s", c->footer);
	if (c->table)
		fprintf(out, "\n%s", c->table());
}

/* ---- docs/cli.md ---- */

/* Prose for Markdown: the characters Markdown would read as markup come out literally. */
static void md_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*_<>[]#|", *s))
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void md_rows(const tk_cli_option *t, const tk_cli_option *shared, const char *shared_link, FILE *out)
{
	for (; t && t->kind != TK_CLI_END; t++) {
		switch (t->kind) {
		case TK_CLI_INCLUDE:
			if (t->include == shared && shared_link) {
				fprintf(out, "\n%s\n", shared_link);
				break;
			}
			md_rows(t->include, shared, shared_link, out);
			break;
		case TK_CLI_SECTION:
			fprintf(out, "\n### ");
			md_text(out, t->name);
			fputc('\n', out);
			if (t->help) {
				fputc('\n', out);
				md_text(out, t->help);
				fputc('\n', out);
			}
			fputc('\n', out);
			break;
		case TK_CLI_TEXT:
			fputc('\n', out);
			md_text(out, t->help);
			fputc('\n', out);
			break;
		default: {
			if (t->kind == TK_CLI_OPERAND && !t->help)
				break;
			int value = (t->kind == TK_CLI_VALUE || t->kind == TK_CLI_LIST) && t->arg;
			fprintf(out, "- `%s%s%s`", t->name, value ? " " : "", value ? t->arg : "");
			if (t->alias)
				fprintf(out, ", `%s%s%s`", t->alias, value ? " " : "", value ? t->arg : "");
			if (t->kind == TK_CLI_LIST)
				fputs(" (repeatable)", out);
			if (t->kind == TK_CLI_OPERAND)
				fputs(" (operand)", out);
			fputs(": ", out);
			md_text(out, t->help ? t->help : "");
			fputc('\n', out);
		}
		}
	}
}

void tk_cli_markdown_table(const tk_cli_option *t, FILE *out)
{
	md_rows(t, NULL, NULL, out);
}

void tk_cli_markdown(const tk_cli_command *c, const char *summary, const tk_cli_option *shared, const char *shared_link,
                     FILE *out)
{
	fprintf(out, "## tracekit %s\n\n", c->name);
	md_text(out, summary);
	fprintf(out, "\n\n```text\n");
	const char *u = c->usage;
	for (int first = 1; *u; first = 0) {
		size_t n = strcspn(u, "\n");
		fprintf(out, "%s%.*s\n", first ? "usage: " : "       ", (int)n, u);
		u += n + (u[n] == '\n');
	}
	fprintf(out, "```\n");
	if (c->about) {
		fputc('\n', out);
		md_text(out, c->about);
	}
	if (c->options && c->options->kind != TK_CLI_SECTION && c->options->kind != TK_CLI_INCLUDE)
		fputc('\n', out);
	md_rows(c->options, shared, shared_link, out);
	if (c->footer) {
		fputc('\n', out);
		md_text(out, c->footer);
	}
	if (c->table)
		fprintf(out, "\n```text\n%s```\n", c->table());
	fputc('\n', out);
}
