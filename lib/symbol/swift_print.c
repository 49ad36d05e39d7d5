/*
 * Printer for the Swift node tree: the full form (what swift-demangle prints: module-qualified
 * names, signatures) and the simplified form crash reports, atos and Instruments show (no
 * modules, no types, argument labels only: "ViewController.viewDidLoad()").
 *
 * An entity whose context is itself a function, closure or local type cannot be printed as a
 * dotted prefix: it is printed as "name in context" instead, which is why printing a context
 * may hand the context back to be printed after the name.
 */
#include <stdio.h>
#include <string.h>

#include "symbol/swift_node.h"

typedef struct pr {
	sw_ctx *c;
	char *o;
	size_t n, cap;
	int simp;
	int depth;
	int fail;
} pr;

enum { TP_NONE, TP_COLON, TP_FUNC };

static void put(pr *p, const char *s, size_t n)
{
	if (p->n + n + 1 > p->cap) {
		p->fail = 1;
		return;
	}
	memcpy(p->o + p->n, s, n);
	p->n += n;
}
static void puts_(pr *p, const char *s)
{
	put(p, s, strlen(s));
}
static void putnum(pr *p, unsigned long long v)
{
	char b[24];
	int l = sizeof b;
	do {
		b[--l] = (char)('0' + v % 10);
		v /= 10;
	} while (v && l > 0);
	put(p, b + l, sizeof b - (size_t)l);
}
static void puttext(pr *p, int n)
{
	put(p, p->c->nodes[n].text, p->c->nodes[n].tlen);
}

static int K(pr *p, int n)
{
	return n < 0 ? -1 : p->c->nodes[n].kind;
}
static int kid(pr *p, int n, int i)
{
	return n < 0 ? -1 : sw_kid(p->c, n, i);
}
static int nk(pr *p, int n)
{
	return n < 0 ? 0 : p->c->nodes[n].nkids;
}

static int print(pr *p, int n, int prefix);
static void print_tuple(pr *p, int tup);

static int text_is(pr *p, int n, const char *s)
{
	size_t l = strlen(s);
	return n >= 0 && p->c->nodes[n].tlen == l && memcmp(p->c->nodes[n].text, s, l) == 0;
}

static void gen_param_name(pr *p, uint64_t depth, uint64_t index)
{
	char b[32];
	int l = 0;
	do {
		b[l++] = (char)('A' + index % 26);
		index /= 26;
	} while (index && l < 16);
	put(p, b, (size_t)l);
	if (depth)
		putnum(p, depth);
}

/* Contexts printed as a dotted prefix; anything else goes after " in ". */
static int should_print_context(pr *p, int ctx)
{
	if (K(p, ctx) == SW_Module && p->simp)
		return 0;
	return 1;
}

static void print_type_list_args(pr *p, int tl)
{
	put(p, "<", 1);
	for (int i = 0; i < nk(p, tl); i++) {
		if (i)
			put(p, ", ", 2);
		print(p, kid(p, tl, i), 0);
	}
	put(p, ">", 1);
}

static void print_signature(pr *p, int sig);

static int is_swift_module(pr *p, int n)
{
	return K(p, n) == SW_Module && text_is(p, n, "Swift");
}

/* Array, Optional, Dictionary sugar */
static int print_sugar(pr *p, int bg)
{
	int t = kid(p, bg, 0), args = kid(p, bg, 1);
	int nom = kid(p, t, 0);
	if (nk(p, nom) < 2 || !is_swift_module(p, kid(p, nom, 0)))
		return 0;
	int name = kid(p, nom, 1);
	int na = nk(p, args);
	if (K(p, nom) == SW_Structure && text_is(p, name, "Array") && na == 1) {
		put(p, "[", 1);
		print(p, kid(p, args, 0), 0);
		put(p, "]", 1);
		return 1;
	}
	if (K(p, nom) == SW_Structure && text_is(p, name, "Dictionary") && na == 2) {
		put(p, "[", 1);
		print(p, kid(p, args, 0), 0);
		put(p, " : ", 3);
		print(p, kid(p, args, 1), 0);
		put(p, "]", 1);
		return 1;
	}
	if (K(p, nom) == SW_Enum && (text_is(p, name, "Optional") || text_is(p, name, "ImplicitlyUnwrappedOptional")) &&
	    na == 1) {
		int a = kid(p, args, 0);
		int in = kid(p, a, 0);
		int k = K(p, in);
		int paren = k == SW_FunctionType || k == SW_NoEscapeFunctionType || k == SW_ProtocolList ||
		            k == SW_ProtocolListWithClass || k == SW_CFunctionPointer || k == SW_ObjCBlock ||
		            k == SW_ImplFunctionType || k == SW_ThinFunctionType;
		if (k == SW_ProtocolList && nk(p, kid(p, in, 0)) <= 1)
			paren = 0;
		if (paren)
			put(p, "(", 1);
		print(p, a, 0);
		if (paren)
			put(p, ")", 1);
		put(p, text_is(p, name, "Optional") ? "?" : "!", 1);
		return 1;
	}
	return 0;
}

/* "(a: T, U...)" for a parameter tuple, with labels from a LabelList when given; simplified:
 * "(a:_:)". */
static void print_params(pr *p, int params_type, int labels, int show_types)
{
	int tup = kid(p, params_type, 0);
	if (!show_types) {
		put(p, "(", 1);
		int n = K(p, tup) == SW_Tuple ? nk(p, tup) : 1;
		for (int i = 0; i < n; i++) {
			int lab = labels >= 0 ? kid(p, labels, i) : -1;
			if (K(p, lab) == SW_Identifier)
				puttext(p, lab);
			else if (labels < 0 && K(p, tup) == SW_Tuple) {
				int el = kid(p, tup, i);
				int nm = -1;
				for (int j = 0; j < nk(p, el); j++)
					if (K(p, kid(p, el, j)) == SW_TupleElementName)
						nm = kid(p, el, j);
				if (nm >= 0)
					puttext(p, nm);
				else
					put(p, "_", 1);
			} else
				put(p, "_", 1);
			put(p, ":", 1);
		}
		put(p, ")", 1);
		return;
	}
	if (K(p, tup) != SW_Tuple) {
		put(p, "(", 1);
		print(p, params_type, 0);
		put(p, ")", 1);
		return;
	}
	put(p, "(", 1);
	for (int i = 0; i < nk(p, tup); i++) {
		if (i)
			put(p, ", ", 2);
		int el = kid(p, tup, i);
		int lab = labels >= 0 ? kid(p, labels, i) : -1;
		if (K(p, lab) == SW_Identifier) {
			puttext(p, lab);
			put(p, ": ", 2);
		} else if (labels < 0) {
			for (int j = 0; j < nk(p, el); j++)
				if (K(p, kid(p, el, j)) == SW_TupleElementName) {
					puttext(p, kid(p, el, j));
					put(p, ": ", 2);
				}
		}
		int variadic = 0;
		for (int j = 0; j < nk(p, el); j++) {
			int k = K(p, kid(p, el, j));
			if (k == SW_VariadicMarker)
				variadic = 1;
			else if (k == SW_Type)
				print(p, kid(p, el, j), 0);
		}
		if (variadic)
			put(p, "...", 3);
	}
	put(p, ")", 1);
}

static void print_function_type(pr *p, int fn, int labels, int show_types)
{
	int args = -1, ret = -1;
	int throws = -1, async = 0, sending = 0;
	static const int order[] = {SW_DifferentiableFunctionType, SW_ConcurrentFunctionType,
	                            SW_GlobalActorFunctionType, SW_IsolatedAnyFunctionType,
	                            SW_NonIsolatedCallerFunctionType};
	for (size_t o = 0; o < sizeof order / sizeof order[0] && show_types; o++)
		for (int i = 0; i < nk(p, fn); i++) {
			int ch = kid(p, fn, i);
			if (K(p, ch) != order[o])
				continue;
			switch (order[o]) {
			case SW_ConcurrentFunctionType: puts_(p, "@Sendable "); break;
			case SW_GlobalActorFunctionType:
				put(p, "@", 1);
				print(p, kid(p, ch, 0), 0);
				put(p, " ", 1);
				break;
			case SW_IsolatedAnyFunctionType: puts_(p, "@isolated(any) "); break;
			case SW_NonIsolatedCallerFunctionType: puts_(p, "nonisolated(nonsending) "); break;
			case SW_DifferentiableFunctionType: puttext(p, ch); break;
			}
		}
	for (int i = 0; i < nk(p, fn); i++) {
		int ch = kid(p, fn, i);
		switch (K(p, ch)) {
		case SW_ArgumentTuple: args = ch; break;
		case SW_ReturnType: ret = ch; break;
		case SW_ThrowsAnnotation:
		case SW_TypedThrowsAnnotation: throws = ch; break;
		case SW_AsyncAnnotation: async = 1; break;
		case SW_SendingResultFunctionType: sending = 1; break;
		}
	}
	if (args < 0)
		return;
	print_params(p, kid(p, args, 0), labels, show_types);
	if (!show_types)
		return;
	if (async)
		puts_(p, " async");
	if (throws >= 0) {
		puts_(p, " throws");
		if (K(p, throws) == SW_TypedThrowsAnnotation) {
			put(p, "(", 1);
			print(p, kid(p, throws, 0), 0);
			put(p, ")", 1);
		}
	}
	puts_(p, " -> ");
	if (sending)
		puts_(p, "sending ");
	if (ret >= 0)
		print(p, kid(p, ret, 0), 0);
}

/* The type of a function-like entity, after its name. */
static void print_entity_type(pr *p, int type, int labels, int style)
{
	if (type < 0)
		return;
	int t = kid(p, type, 0);
	if (style == TP_COLON) {
		if (p->simp)
			return;
		puts_(p, " : ");
		print(p, type, 0);
		return;
	}
	if (K(p, t) == SW_DependentGenericType) {
		print_signature(p, kid(p, t, 0));
		t = kid(p, kid(p, t, 1), 0);
	}
	int k = K(p, t);
	if (k == SW_FunctionType || k == SW_NoEscapeFunctionType)
		print_function_type(p, t, labels, !p->simp);
	else if (!p->simp) {
		puts_(p, " : ");
		print(p, type, 0);
	}
}

/* Returns the context still to be printed after " in " (or -1). */
static int print_entity(pr *p, int e, int prefix, int style, int has_name, const char *extra, long extra_idx,
                        const char *over)
{
	int name = has_name ? kid(p, e, 1) : -1;
	char buf[48];
	if (extra && extra_idx >= 0) {
		snprintf(buf, sizeof buf, "%s%ld", extra, extra_idx);
		extra = buf;
	}
	int multi = extra && strchr(extra, ' ');
	if (K(p, name) == SW_LocalDeclName)
		multi = 1;
	if (prefix && (style != TP_NONE || multi))
		return e;
	int post = -1;
	int ctx = kid(p, e, 0);
	if (should_print_context(p, ctx)) {
		if (multi)
			post = ctx;
		else {
			size_t at = p->n;
			post = print(p, ctx, 1);
			if (p->n != at)
				put(p, ".", 1);
		}
	}
	if (has_name || over) {
		size_t at = p->n;
		if (has_name)
			print(p, name, 0);
		if (over) {
			if (has_name && p->n != at)
				put(p, ".", 1);
			puts_(p, over);
		}
		if (extra) {
			if (p->n != at)
				put(p, multi ? " " : ".", 1);
			puts_(p, extra);
		}
	} else if (extra)
		puts_(p, extra);
	/* type */
	int type = -1, labels = -1;
	for (int i = 1; i < nk(p, e); i++) {
		int ch = kid(p, e, i);
		if (K(p, ch) == SW_Type)
			type = ch;
		else if (K(p, ch) == SW_LabelList)
			labels = ch;
	}
	if (type >= 0 && style != TP_NONE) {
		int tk = K(p, kid(p, type, 0));
		if (style == TP_FUNC && multi &&
		    (tk == SW_FunctionType || tk == SW_NoEscapeFunctionType || tk == SW_DependentGenericType))
			put(p, " ", 1);
		print_entity_type(p, type, labels, style);
	}
	if (!prefix && post >= 0) {
		int k = K(p, e);
		puts_(p, k == SW_DefaultArgumentInitializer || k == SW_Initializer ? " of " : " in ");
		print(p, post, 0);
		post = -1;
	}
	return post;
}

static void print_requirement_subject(pr *p, int t)
{
	print(p, t, 0);
}

static void print_signature(pr *p, int sig)
{
	/* parameter names per depth, then "where" requirements */
	int first = 1;
	int nreq = 0;
	for (int i = 0; i < nk(p, sig); i++)
		if (K(p, kid(p, sig, i)) != SW_GenericParamCount)
			nreq++;
	int depth = 0;
	int ncounts = 0;
	for (int i = 0; i < nk(p, sig); i++)
		ncounts += K(p, kid(p, sig, i)) == SW_GenericParamCount;
	for (int i = 0; i < nk(p, sig) || (i == 0 && !ncounts); i++) {
		int ch = kid(p, sig, i);
		if (ncounts && K(p, ch) != SW_GenericParamCount)
			break;
		uint64_t cnt = ncounts ? p->c->nodes[ch].index : 0;
		(void)first;
		put(p, "<", 1);
		for (uint64_t j = 0; j < cnt && !p->fail; j++) {
			if (j >= 128) { /* as swift-demangle: the first 128 names */
				puts_(p, ", ...");
				break;
			}
			if (j)
				put(p, ", ", 2);
			gen_param_name(p, (uint64_t)depth, j);
		}
		int last = !ncounts || i + 1 >= nk(p, sig) || K(p, kid(p, sig, i + 1)) != SW_GenericParamCount;
		if (last && nreq && !p->simp) {
			puts_(p, " where ");
			int fr = 1;
			for (int j = 0; j < nk(p, sig); j++) {
				int r = kid(p, sig, j);
				if (K(p, r) == SW_GenericParamCount)
					continue;
				if (!fr)
					put(p, ", ", 2);
				fr = 0;
				print_requirement_subject(p, kid(p, r, 0));
				switch (K(p, r)) {
				case SW_ConformanceReq:
					put(p, ": ", 2);
					print(p, kid(p, r, 1), 0);
					break;
				case SW_SameTypeReq:
					put(p, " == ", 4);
					print(p, kid(p, r, 1), 0);
					break;
				case SW_LayoutReq:
					put(p, ": ", 2);
					puttext(p, kid(p, r, 1));
					if (nk(p, r) > 2) {
						put(p, "(", 1);
						for (int a = 2; a < nk(p, r); a++) {
							if (a > 2)
								put(p, ", ", 2);
							putnum(p, p->c->nodes[kid(p, r, a)].index);
						}
						put(p, ")", 1);
					}
					break;
				case SW_InverseReq: {
					uint64_t v = p->c->nodes[kid(p, r, 1)].index;
					put(p, ": ~", 3);
					if (v == 0)
						puts_(p, "Swift.Copyable");
					else if (v == 1)
						puts_(p, "Swift.Escapable");
					else {
						puts_(p, "Swift.<bit ");
						putnum(p, v);
						put(p, ">", 1);
					}
					break;
				}
				}
			}
		}
		put(p, ">", 1);
		depth++;
		if (!ncounts)
			break;
	}
}

static void print_dependent_member(pr *p, int n)
{
	print(p, kid(p, n, 0), 0);
	put(p, ".", 1);
	int ref = kid(p, n, 1);
	if (nk(p, ref) > 1 && !p->simp) {
		print(p, kid(p, ref, 1), 0);
		put(p, ".", 1);
	}
	print(p, kid(p, ref, 0), 0);
}

static void print_conformance(pr *p, int n)
{
	print(p, kid(p, n, 0), 0);
	if (p->simp)
		return;
	puts_(p, " : ");
	print(p, kid(p, n, 1), 0);
	puts_(p, " in ");
	print(p, kid(p, n, 2), 0);
}

static int print_global_item(pr *p, int n)
{
	int k = K(p, n);
	switch (k) {
	case SW_Attr:
		/* crash reports and Instruments say nothing about merged functions */
		if (!(p->simp && p->c->nodes[n].tlen == 7 && !memcmp(p->c->nodes[n].text, "merged ", 7)))
			puttext(p, n);
		return 1;
	case SW_PartialApply:
		if (p->simp)
			puts_(p, "partial apply");
		else
			puttext(p, n);
		return 2;
	case SW_AsyncPartial:
		if (p->simp)
			return 1;
		put(p, "(", 1);
		putnum(p, p->c->nodes[n].index);
		put(p, ") ", 2);
		puttext(p, n);
		puts_(p, " resume partial function for ");
		return 1;
	case SW_OutlinedVariable:
		puts_(p, "outlined ");
		puttext(p, n);
		puts_(p, " #");
		putnum(p, p->c->nodes[n].index);
		puts_(p, " of ");
		return 1;
	case SW_OutlinedBridged:
		puts_(p, "outlined bridged method (");
		puttext(p, n);
		puts_(p, ") of ");
		return 1;
	case SW_Specialization:
		if (p->simp) {
			/* one "specialized" however many specializations are stacked */
			if (p->n < 12 || memcmp(p->o + p->n - 12, "specialized ", 12))
				puts_(p, "specialized ");
			return 1;
		}
		puttext(p, n);
		put(p, "<", 1);
		for (int i = 0; i < nk(p, n); i++) {
			if (i)
				put(p, ", ", 2);
			int ch = kid(p, n, i);
			if (K(p, ch) == SW_SpecFlag)
				puttext(p, ch);
			else if (K(p, ch) == SW_FSSpec) {
				puttext(p, ch);
				for (int j = 0; j < nk(p, ch); j++)
					print(p, kid(p, ch, j), 0);
			} else if (K(p, ch) == SW_SpecializationParam) {
				print(p, kid(p, ch, 0), 0);
				for (int j = 1; j < nk(p, ch); j++) {
					puts_(p, j == 1 ? " with " : " and ");
					print_conformance(p, kid(p, ch, j));
				}
			} else
				print(p, ch, 0);
		}
		puts_(p, "> of ");
		return 1;
	}
	return 0;
}

static void print_global(pr *p, int g)
{
	for (int i = 0; i < nk(p, g); i++) {
		int n = kid(p, g, i);
		int r = print_global_item(p, n);
		if (r == 2) {
			if (i + 1 < nk(p, g) && K(p, kid(p, g, i + 1)) != SW_Suffix)
				puts_(p, " for ");
			continue;
		}
		if (r)
			continue;
		if (K(p, n) == SW_Suffix) {
			if (p->simp)
				continue;
			puts_(p, " with unmangled suffix \"");
			puttext(p, n);
			put(p, "\"", 1);
			continue;
		}
		print(p, n, 0);
	}
}

static void print_impl_function(pr *p, int f)
{
	int sending = 0, np = 0, nr = 0, subs[2] = {-1, -1};
	for (int i = 0; i < nk(p, f); i++) {
		int ch = kid(p, f, i);
		switch (K(p, ch)) {
		case SW_ImplAttr:
			puttext(p, ch);
			put(p, " ", 1);
			break;
		case SW_DependentGenericSignature:
			print_signature(p, ch);
			put(p, " ", 1);
			break;
		case SW_SendingResultFunctionType: sending = 1; break;
		case SW_TypeList: subs[p->c->nodes[ch].text[0] == 'i'] = ch; break;
		}
	}
	if (subs[0] >= 0) {
		puts_(p, "@substituted ");
		print_signature(p, kid(p, subs[0], 0));
		put(p, " ", 1);
	}
	put(p, "(", 1);
	for (int i = 0; i < nk(p, f); i++) {
		int ch = kid(p, f, i);
		if (K(p, ch) != SW_ImplParameter)
			continue;
		if (np++)
			put(p, ", ", 2);
		puttext(p, ch);
		put(p, " ", 1);
		uint64_t fl = p->c->nodes[ch].index;
		if (fl & 1)
			puts_(p, "@noDerivative ");
		if (fl & 2)
			puts_(p, "sending ");
		print(p, kid(p, ch, 0), 0);
	}
	puts_(p, ") -> ");
	if (sending)
		puts_(p, "sending ");
	put(p, "(", 1);
	for (int i = 0; i < nk(p, f); i++) {
		int ch = kid(p, f, i);
		int k = K(p, ch);
		if (k != SW_ImplResult && k != SW_ImplYield && k != SW_ImplErrorResult)
			continue;
		if (nr++)
			put(p, ", ", 2);
		if (k == SW_ImplYield)
			puts_(p, "@yields ");
		if (k == SW_ImplErrorResult)
			puts_(p, "@error ");
		puttext(p, ch);
		put(p, " ", 1);
		if (p->c->nodes[ch].index & 1)
			puts_(p, "@noDerivative ");
		print(p, kid(p, ch, 0), 0);
	}
	put(p, ")", 1);
	/* swift-demangle runs the pattern's substitutions together (no separator) */
	for (int w = 0; w < 2; w++) {
		if (subs[w] < 0)
			continue;
		puts_(p, " for <");
		for (int i = w ? 0 : 1; i < nk(p, subs[w]); i++) {
			if (w && i)
				put(p, ", ", 2);
			print(p, kid(p, subs[w], i), 0);
		}
		put(p, ">", 1);
	}
}

static int print(pr *p, int n, int prefix)
{
	if (n < 0 || p->fail) {
		p->fail = 1;
		return -1;
	}
	if (++p->depth > SW_MAX_DEPTH * 2) {
		p->fail = 1;
		return -1;
	}
	int ret = -1;
	sw_ctx *c = p->c;
	sw_node *x = &c->nodes[n];
	switch (x->kind) {
	case SW_Global: print_global(p, n); break;
	case SW_Type: ret = print(p, kid(p, n, 0), prefix); break;
	case SW_Module:
		if (!p->simp)
			puttext(p, n);
		break;
	case SW_Identifier:
	case SW_BuiltinType:
	case SW_Text: puttext(p, n); break;
	case SW_InfixOperator:
		puttext(p, n);
		puts_(p, " infix");
		break;
	case SW_PrefixOperator:
		puttext(p, n);
		puts_(p, " prefix");
		break;
	case SW_PostfixOperator:
		puttext(p, n);
		puts_(p, " postfix");
		break;
	case SW_LocalDeclName:
		print(p, kid(p, n, 1), 0);
		puts_(p, " #");
		putnum(p, c->nodes[kid(p, n, 0)].index + 1);
		break;
	case SW_PrivateDeclName:
		if (nk(p, n) == 1) {
			if (!p->simp) {
				puts_(p, "(in ");
				print(p, kid(p, n, 0), 0);
				puts_(p, ")");
			}
			break;
		}
		if (p->simp) {
			print(p, kid(p, n, 1), 0);
			break;
		}
		put(p, "(", 1);
		print(p, kid(p, n, 1), 0);
		puts_(p, " in ");
		print(p, kid(p, n, 0), 0);
		put(p, ")", 1);
		break;
	case SW_RelatedEntityDeclName:
		puts_(p, "related decl '");
		puttext(p, n);
		puts_(p, "' for ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_TypeAlias: {
		int ctx = kid(p, n, 0);
		if (K(p, ctx) == SW_BoundGenericProtocol && nk(p, kid(p, ctx, 1)) == 1) {
			/* a protocol's typealias seen through a conforming type: "T as P.Alias" */
			print(p, kid(p, kid(p, ctx, 1), 0), 0);
			puts_(p, " as ");
			print(p, kid(p, ctx, 0), 0);
			put(p, ".", 1);
			print(p, kid(p, n, 1), 0);
			break;
		}
		ret = print_entity(p, n, prefix, TP_NONE, 1, NULL, -1, NULL);
		break;
	}
	case SW_Class:
	case SW_Structure:
	case SW_Enum:
	case SW_Protocol:
	case SW_OtherNominal: ret = print_entity(p, n, prefix, TP_NONE, 1, NULL, -1, NULL); break;
	case SW_Function: ret = print_entity(p, n, prefix, TP_FUNC, 1, NULL, -1, NULL); break;
	case SW_Variable: ret = print_entity(p, n, prefix, TP_COLON, 1, NULL, -1, NULL); break;
	case SW_Subscript: {
		int has = K(p, kid(p, n, 1)) == SW_PrivateDeclName;
		ret = print_entity(p, n, prefix, TP_FUNC, has, NULL, -1, has ? NULL : "subscript");
		break;
	}
	case SW_Constructor:
	case SW_Allocator: {
		int has = K(p, kid(p, n, 1)) == SW_PrivateDeclName;
		int ctx = kid(p, n, 0);
		int cls = K(p, ctx) == SW_Class || K(p, ctx) == SW_BoundGenericClass;
		ret = print_entity(p, n, prefix, TP_FUNC, has, NULL, -1,
		                   x->kind == SW_Allocator && cls ? "__allocating_init" : "init");
		break;
	}
	case SW_Destructor: ret = print_entity(p, n, prefix, TP_NONE, 0, NULL, -1, "deinit"); break;
	case SW_Deallocator: ret = print_entity(p, n, prefix, TP_NONE, 0, NULL, -1, "__deallocating_deinit"); break;
	case SW_IsolatedDeallocator:
		ret = print_entity(p, n, prefix, TP_NONE, 0, NULL, -1, "__isolated_deallocating_deinit");
		break;
	case SW_IVarInitializer: ret = print_entity(p, n, prefix, TP_NONE, 0, NULL, -1, "__ivar_initializer"); break;
	case SW_IVarDestroyer: ret = print_entity(p, n, prefix, TP_NONE, 0, NULL, -1, "__ivar_destroyer"); break;
	case SW_ExplicitClosure:
	case SW_ImplicitClosure:
		ret = print_entity(p, n, prefix, p->simp ? TP_NONE : TP_FUNC, 0,
		                   x->kind == SW_ExplicitClosure ? "closure #" : "implicit closure #",
		                   (long)x->index + 1, NULL);
		break;
	case SW_MacroExpansion:
	case SW_UniqueName: {
		/* "<what> #N of NAME in CONTEXT": as a context it goes after " in " */
		if (prefix) {
			ret = n;
			break;
		}
		int third = kid(p, n, 2);
		if (x->kind == SW_UniqueName)
			puts_(p, "unique name #");
		else if (x->tlen == 1)
			puts_(p, "freestanding macro expansion #");
		else {
			puttext(p, n);
			puts_(p, " macro @");
			print(p, kid(p, n, 1), 0);
			puts_(p, " expansion #");
		}
		putnum(p, x->index + 1);
		puts_(p, " of ");
		if (x->kind == SW_MacroExpansion && x->tlen > 1)
			print(p, third, 0);
		else {
			print(p, kid(p, n, 1), 0);
			if (third >= 0)
				print(p, third, 0);
		}
		puts_(p, " in ");
		print(p, kid(p, n, 0), 0);
		break;
	}
	case SW_ModuleContextLocation:
		if (prefix) {
			ret = n;
			break;
		}
		puts_(p, "module ");
		puttext(p, kid(p, n, 0));
		puts_(p, " file ");
		puttext(p, kid(p, n, 1));
		puts_(p, " line ");
		putnum(p, c->nodes[kid(p, n, 2)].index);
		puts_(p, " column ");
		putnum(p, c->nodes[kid(p, n, 3)].index);
		break;
	case SW_DefaultArgumentInitializer:
		ret = print_entity(p, n, prefix, TP_NONE, 0, "default argument ", (long)x->index, NULL);
		break;
	case SW_Initializer:
		ret = print_entity(p, n, prefix, TP_NONE, 0, "variable initialization expression", -1, NULL);
		break;
	case SW_Static:
		puts_(p, "static ");
		ret = print(p, kid(p, n, 0), prefix);
		break;
	case SW_Extension:
		if (p->simp) {
			ret = print(p, kid(p, n, 1), prefix);
			if (nk(p, n) > 2)
				print_signature(p, kid(p, n, 2)); /* parameter names only */
			break;
		}
		puts_(p, "(extension in ");
		print(p, kid(p, n, 0), 1);
		puts_(p, "):");
		print(p, kid(p, n, 1), 0);
		if (nk(p, n) > 2)
			print_signature(p, kid(p, n, 2));
		break;
	case SW_Getter:
	case SW_Setter:
	case SW_ModifyAccessor:
	case SW_ReadAccessor:
	case SW_Modify2:
	case SW_Read2:
	case SW_WillSet:
	case SW_DidSet:
	case SW_GlobalGetter:
	case SW_MaterializeForSet:
	case SW_UnsafeAddressor:
	case SW_UnsafeMutableAddressor:
	case SW_OwningAddressor:
	case SW_OwningMutableAddressor:
	case SW_NativeOwningAddressor:
	case SW_NativeOwningMutableAddressor:
	case SW_NativePinningAddressor:
	case SW_NativePinningMutableAddressor:
	case SW_InitAccessor: {
		static const char *const names[] = {"getter",
		                                    "setter",
		                                    "modify",
		                                    "read",
		                                    "modify2",
		                                    "read2",
		                                    "willset",
		                                    "didset",
		                                    "getter",
		                                    "materializeForSet",
		                                    "unsafeAddressor",
		                                    "unsafeMutableAddressor",
		                                    "owningAddressor",
		                                    "owningMutableAddressor",
		                                    "nativeOwningAddressor",
		                                    "nativeOwningMutableAddressor",
		                                    "nativePinningAddressor",
		                                    "nativePinningMutableAddressor",
		                                    "init"};
		const char *nm = names[x->kind - SW_Getter];
		int st = kid(p, n, 0);
		if (K(p, st) == SW_Variable)
			ret = print_entity(p, st, prefix, TP_COLON, 1, nm, -1, NULL);
		else if (K(p, st) == SW_Subscript) {
			int has = K(p, kid(p, st, 1)) == SW_PrivateDeclName;
			ret = print_entity(p, st, prefix, TP_COLON, has, nm, -1, has ? NULL : "subscript");
		} else
			p->fail = 1;
		break;
	}
	case SW_BoundGenericClass:
	case SW_BoundGenericStructure:
	case SW_BoundGenericEnum:
	case SW_BoundGenericProtocol:
	case SW_BoundGenericOtherNominal:
	case SW_BoundGenericTypeAlias:
		if (print_sugar(p, n))
			break;
		print(p, kid(p, n, 0), 0);
		print_type_list_args(p, kid(p, n, 1));
		break;
	case SW_Tuple: print_tuple(p, n); break;
	case SW_FunctionType:
	case SW_NoEscapeFunctionType: print_function_type(p, n, -1, !p->simp); break;
	case SW_ObjCBlock:
	case SW_CFunctionPointer: {
		const char *conv = x->kind == SW_ObjCBlock ? "block" : "c";
		int clang = K(p, kid(p, n, 0)) == SW_ClangType ? kid(p, n, 0) : -1;
		puts_(p, "@convention(");
		puts_(p, conv);
		if (clang >= 0) {
			puts_(p, ", mangledCType: \"");
			puttext(p, clang);
			put(p, "\"", 1);
		}
		puts_(p, ") ");
		print_function_type(p, n, -1, !p->simp);
		break;
	}
	case SW_ValueWitness:
		puttext(p, n);
		puts_(p, p->simp ? " for " : " value witness for ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_AssocWitness:
		if (x->text[0] == 't') {
			puts_(p, "associated type metadata accessor for ");
			print(p, kid(p, n, 1), 0);
		} else {
			puts_(p, "associated type witness table accessor for ");
			print(p, kid(p, n, 1), 0);
			puts_(p, " : ");
			print(p, kid(p, n, 2), 0);
		}
		puts_(p, " in ");
		print_conformance(p, kid(p, n, 0));
		break;
	case SW_ThinFunctionType:
		puts_(p, "@convention(thin) ");
		print_function_type(p, n, -1, 1);
		break;
	case SW_AutoClosureType:
	case SW_EscapingAutoClosureType:
		puts_(p, "@autoclosure ");
		print_function_type(p, n, -1, !p->simp);
		break;
	case SW_ImplFunctionType: print_impl_function(p, n); break;
	case SW_OpaqueReturnType: puts_(p, "some"); break;
	case SW_Integer: puttext(p, n); break;
	case SW_SugaredInlineArray:
		put(p, "[", 1);
		print(p, kid(p, n, 0), 0);
		puts_(p, " of ");
		print(p, kid(p, n, 1), 0);
		put(p, "]", 1);
		break;
	case SW_AutoDiff: {
		puttext(p, n);
		int i = 0;
		for (; i < nk(p, n) && K(p, kid(p, n, i)) == SW_Attr; i++)
			puttext(p, kid(p, n, i));
		print(p, kid(p, n, i), 0);
		puts_(p, " with respect to parameters ");
		puttext(p, kid(p, n, i + 1));
		puts_(p, " and results ");
		puttext(p, kid(p, n, i + 2));
		if (i + 3 < nk(p, n)) {
			puts_(p, " with ");
			print_signature(p, kid(p, n, i + 3));
		}
		break;
	}
	case SW_BoundGenericFunction: {
		/* a generic function with its arguments bound: name<args>(signature) */
		int fn = kid(p, n, 0);
		if (prefix) {
			ret = n;
			break;
		}
		int ctx = kid(p, fn, 0);
		size_t at = p->n;
		int post = print(p, ctx, 1);
		if (p->n != at)
			put(p, ".", 1);
		if (K(p, fn) == SW_Function)
			print(p, kid(p, fn, 1), 0);
		print_type_list_args(p, kid(p, n, 1));
		int type = -1, labels = -1;
		for (int i = 1; i < nk(p, fn); i++) {
			int ch = kid(p, fn, i);
			if (K(p, ch) == SW_Type)
				type = ch;
			else if (K(p, ch) == SW_LabelList)
				labels = ch;
		}
		/* the arguments replace the generic signature */
		if (K(p, kid(p, type, 0)) == SW_DependentGenericType)
			type = kid(p, kid(p, type, 0), 1);
		print_entity_type(p, type, labels, TP_FUNC);
		if (post >= 0) {
			puts_(p, " in ");
			print(p, post, 0);
		}
		break;
	}
	case SW_ConformanceReq:
		print(p, kid(p, n, 0), 0);
		puts_(p, ": ");
		print(p, kid(p, n, 1), 0);
		break;
	case SW_OpaqueTypeDescriptorRef:
		puts_(p, "<<opaque return type of ");
		print(p, kid(p, n, 0), 0);
		puts_(p, ">>");
		break;
	case SW_OpaqueType:
		print(p, kid(p, n, 0), 0);
		put(p, ".", 1);
		putnum(p, x->index);
		break;
	case SW_InOut:
		puts_(p, "inout ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Shared:
		puts_(p, "__shared ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Owned:
		puts_(p, "__owned ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Isolated:
		puts_(p, "isolated ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Sending:
		puts_(p, "sending ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_CompileTimeLiteral:
		puts_(p, "_const ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_NoDerivative:
		puts_(p, "@noDerivative ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Weak:
		puts_(p, "weak ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Unowned:
		puts_(p, "unowned ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_Unmanaged:
		puts_(p, "unowned(unsafe) ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_DynamicSelf: puts_(p, "Self"); break;
	case SW_ErrorType: puts_(p, "<ERROR TYPE>"); break;
	case SW_Metatype:
		if (x->text)
			puttext(p, n);
		{
			int t = kid(p, n, 0);
			int in = kid(p, t, 0);
			int k = K(p, in);
			int paren = k == SW_FunctionType || k == SW_NoEscapeFunctionType || k == SW_ProtocolList;
			if (k == SW_ProtocolList && nk(p, kid(p, in, 0)) <= 1)
				paren = 0;
			if (paren)
				put(p, "(", 1);
			print(p, t, 0);
			if (paren)
				put(p, ")", 1);
			puts_(p, K(p, in) == SW_ProtocolList ? ".Protocol" : ".Type");
		}
		break;
	case SW_ExistentialMetatype:
		print(p, kid(p, n, 0), 0);
		puts_(p, ".Type");
		break;
	case SW_ProtocolList: {
		int tl = kid(p, n, 0);
		if (nk(p, tl) == 0) {
			puts_(p, "Any");
			break;
		}
		for (int i = 0; i < nk(p, tl); i++) {
			if (i)
				puts_(p, " & ");
			print(p, kid(p, tl, i), 0);
		}
		break;
	}
	case SW_ProtocolListWithClass: {
		int tl = kid(p, kid(p, n, 0), 0);
		print(p, kid(p, n, 1), 0);
		for (int i = 0; i < nk(p, tl); i++) {
			puts_(p, " & ");
			print(p, kid(p, tl, i), 0);
		}
		break;
	}
	case SW_ProtocolListWithAnyObject: {
		int tl = kid(p, kid(p, n, 0), 0);
		for (int i = 0; i < nk(p, tl); i++) {
			print(p, kid(p, tl, i), 0);
			puts_(p, " & ");
		}
		puts_(p, "AnyObject");
		break;
	}
	case SW_DependentGenericParamType: gen_param_name(p, x->index >> 32, x->index & 0xffffffffu); break;
	case SW_DependentMemberType: print_dependent_member(p, n); break;
	case SW_SILBoxType: {
		int fields = kid(p, n, 0), sig = kid(p, n, 1);
		if (sig >= 0) {
			print_signature(p, sig);
			put(p, " ", 1);
		}
		put(p, "{", 1);
		for (int i = 0; i < nk(p, fields); i++) {
			int t = kid(p, fields, i), in = kid(p, t, 0);
			puts_(p, i ? ", " : " ");
			if (K(p, in) == SW_InOut) {
				puts_(p, "var ");
				print(p, kid(p, in, 0), 0);
			} else {
				puts_(p, "let ");
				print(p, t, 0);
			}
		}
		puts_(p, " }");
		if (sig >= 0) {
			put(p, " ", 1);
			print_type_list_args(p, kid(p, n, 2));
		}
		break;
	}
	case SW_ConcreteProtocolConformance: {
		puts_(p, "concrete protocol conformance ");
		print(p, kid(p, n, 0), 0);
		puts_(p, " to ");
		print(p, kid(p, n, 1), 0);
		int l = kid(p, n, 2);
		if (l >= 0 && nk(p, l) > 0) {
			puts_(p, " with conditional requirements: ");
			print(p, l, 0);
		}
		break;
	}
	case SW_ProtocolConformanceRef:
		puts_(p, !x->text            ? "protocol conformance ref (retroactive) "
		         : x->text[0] == 'P' ? "protocol conformance ref (type's module) "
		                             : "protocol conformance ref (protocol's module) ");
		print(p, kid(p, n, 0), 0);
		break;
	case SW_ConformanceList:
		if (x->text)
			puts_(p, "pack protocol conformance ");
		put(p, "(", 1);
		for (int i = 0; i < nk(p, n); i++) {
			if (i)
				put(p, ", ", 2);
			print(p, kid(p, n, i), 0);
		}
		put(p, ")", 1);
		break;
	case SW_Pack:
		puts_(p, "Pack{");
		for (int i = 0; i < nk(p, n); i++) {
			if (i)
				put(p, ", ", 2);
			print(p, kid(p, n, i), 0);
		}
		put(p, "}", 1);
		break;
	case SW_AnonymousContext: {
		if (p->simp) /* not qualified in the simplified form */
			break;
		print(p, kid(p, n, 1), 0);
		puts_(p, ".(unknown context at ");
		print(p, kid(p, n, 0), 0);
		put(p, ")", 1);
		int tl = kid(p, n, 2);
		if (nk(p, tl) > 0)
			print_type_list_args(p, tl);
		break;
	}
	case SW_ConstrainedExistential: {
		puts_(p, "any ");
		print(p, kid(p, n, 0), 0);
		int reqs = kid(p, n, 1);
		put(p, "<", 1);
		for (int i = 0; i < nk(p, reqs); i++) {
			int r = kid(p, reqs, i);
			if (i)
				put(p, ", ", 2);
			print(p, kid(p, r, 0), 0);
			puts_(p, K(p, r) == SW_SameTypeReq ? " == " : ": ");
			print(p, kid(p, r, 1), 0);
		}
		put(p, ">", 1);
		break;
	}
	case SW_DependentGenericType: {
		print_signature(p, kid(p, n, 0));
		int ik = K(p, kid(p, kid(p, n, 1), 0));
		if (ik != SW_FunctionType && ik != SW_NoEscapeFunctionType)
			put(p, " ", 1);
		print(p, kid(p, n, 1), 0);
		break;
	}
	case SW_DependentGenericSignature: print_signature(p, n); break;
	case SW_AttrFor:
		puttext(p, n);
		for (int i = 0; i < nk(p, n); i++) {
			if (i)
				puts_(p, " and conformance ");
			print(p, kid(p, n, i), 0);
		}
		break;
	case SW_Thunk:
		puttext(p, n);
		for (int i = 0; i < nk(p, n); i++)
			print(p, kid(p, n, i), 0);
		break;
	case SW_ProtocolConformance: print_conformance(p, n); break;
	case SW_ProtocolWitness:
		puts_(p, "protocol witness for ");
		print(p, kid(p, n, 1), 0);
		puts_(p, " in conformance ");
		print_conformance(p, kid(p, n, 0));
		break;
	case SW_ReabstractionThunk: {
		if (p->simp) {
			puts_(p, "thunk for ");
			print(p, kid(p, n, nk(p, n) - 2), 0);
			break;
		}
		puttext(p, n);
		int i = 0;
		if (K(p, kid(p, n, 0)) == SW_DependentGenericSignature) {
			print_signature(p, kid(p, n, 0));
			put(p, " ", 1);
			i = 1;
		}
		puts_(p, "from ");
		print(p, kid(p, n, i), 0);
		puts_(p, " to ");
		print(p, kid(p, n, i + 1), 0);
		break;
	}
	default: p->fail = 1; break; /* a node this printer does not know: no guessing */
	}
	p->depth--;
	return ret;
}

int sw_print(sw_ctx *c, int root, int simplified, char *out, size_t cap)
{
	pr p = {c, out, 0, cap, simplified, 0, 0};
	(void)print_tuple;
	print(&p, root, 0);
	if (p.fail || p.n >= cap)
		return -1;
	out[p.n] = 0;
	return (int)p.n;
}

static void print_tuple(pr *p, int tup)
{
	put(p, "(", 1);
	for (int i = 0; i < nk(p, tup); i++) {
		if (i)
			put(p, ", ", 2);
		int el = kid(p, tup, i);
		int variadic = 0;
		for (int j = 0; j < nk(p, el); j++) {
			int ch = kid(p, el, j);
			int k = K(p, ch);
			if (k == SW_TupleElementName) {
				puttext(p, ch);
				put(p, ": ", 2);
			} else if (k == SW_VariadicMarker)
				variadic = 1;
			else
				print(p, ch, 0);
		}
		if (variadic)
			put(p, "...", 3);
	}
	put(p, ")", 1);
}
