/*
 * Swift demangler, current mangling ("$s", "_$s", "$e", Swift 4.2 "$S", Swift 4 "_T0"), written
 * from the grammar in the Swift project's docs/ABI/Mangling.rst.
 *
 * The mangling is postfix: operands come first and an operator character pops them from a
 * stack and pushes the node it builds, so the parser is a loop over operators with a node
 * stack, not a recursive descent. Nominal types, identifiers and a few others are remembered
 * as substitutions ("A" + index refers back to them), and identifiers may reuse words of
 * earlier ones ("0" prefix). Every pool is fixed-size and every read is bounds-checked: the
 * parser fails rather than guess, and the caller then shows the input unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/swift_node.h"

static int attr_for(sw_ctx *c, const char *text, int child);
static int pop_protocol(sw_ctx *c);
static int gpi(sw_ctx *c);
static int assoc_path(sw_ctx *c, int base);
static int pop_protocol_list(sw_ctx *c);
static int conformance_op(sw_ctx *c);
static int attr(sw_ctx *c, const char *text);
static int autodiff(sw_ctx *c, int witness);
static int pop_conformance(sw_ctx *c);
static int pop_any_entity(sw_ctx *c);

/* ---------------------------------------------------------------- pools */

int sw_new_text(sw_ctx *c, int kind, const char *t, size_t len)
{
	int i = sw_new(c, kind);
	if (i >= 0) {
		c->nodes[i].text = t;
		c->nodes[i].tlen = (uint32_t)len;
	}
	return i;
}

int sw_new_index(sw_ctx *c, int kind, uint64_t idx)
{
	int i = sw_new(c, kind);
	if (i >= 0)
		c->nodes[i].index = idx;
	return i;
}

void sw_add_slow(sw_ctx *c, int p, int k)
{
	if (c->fail)
		return;
	if (p <= 0 || k <= 0) {
		c->fail = 1;
		return;
	}
	sw_node *n = &c->nodes[p];
	if (n->nkids == n->cap) {
		unsigned ncap = n->cap ? n->cap * 2u : 2u;
		if (ncap > 4096 || c->nkidpool + (int)ncap > SW_MAX_KIDS) {
			c->fail = 1;
			return;
		}
		if (n->nkids)
			memcpy(&c->kidpool[c->nkidpool], &c->kidpool[n->kids], n->nkids * sizeof(uint32_t));
		n->kids = (uint32_t)c->nkidpool;
		n->cap = (uint16_t)ncap;
		c->nkidpool += (int)ncap;
	}
	c->kidpool[n->kids + n->nkids++] = (uint32_t)k;
}

static int mk1(sw_ctx *c, int kind, int a)
{
	if (a < 0)
		return -1;
	int n = sw_new(c, kind);
	sw_add(c, n, a);
	return n;
}

static int mk2(sw_ctx *c, int kind, int a, int b)
{
	if (a < 0 || b < 0)
		return -1;
	int n = sw_new(c, kind);
	sw_add(c, n, a);
	sw_add(c, n, b);
	return n;
}

static int mktext(sw_ctx *c, int kind, const char *s)
{
	return sw_new_text(c, kind, s, strlen(s));
}

static void reverse_kids(sw_ctx *c, int n, int from)
{
	sw_node *x = &c->nodes[n];
	if (x->nkids < 2)
		return;
	uint32_t *k = &c->kidpool[x->kids];
	for (int i = from, j = x->nkids - 1; i < j; i++, j--) {
		uint32_t t = k[i];
		k[i] = k[j];
		k[j] = t;
	}
}

/* ---------------------------------------------------------------- stack */

static void push(sw_ctx *c, int n)
{
	if (n < 0 || c->sp >= SW_MAX_STACK) {
		c->fail = 1;
		return;
	}
	c->stack[c->sp++] = n;
}

static int top_kind(sw_ctx *c)
{
	return c->sp ? c->nodes[c->stack[c->sp - 1]].kind : -1;
}

static int pop(sw_ctx *c)
{
	return c->sp ? c->stack[--c->sp] : -1;
}

static int pop_kind(sw_ctx *c, int kind)
{
	if (top_kind(c) != kind)
		return -1;
	return pop(c);
}

static void add_subst(sw_ctx *c, int n)
{
	if (n < 0)
		return;
	if (c->nsubst >= SW_MAX_SUBST) {
		c->fail = 1;
		return;
	}
	c->subst[c->nsubst++] = n;
}

static int is_context_kind(int k)
{
	switch (k) {
	case SW_Module:
	case SW_Class:
	case SW_Structure:
	case SW_Enum:
	case SW_Protocol:
	case SW_TypeAlias:
	case SW_OtherNominal:
	case SW_Function:
	case SW_Variable:
	case SW_Subscript:
	case SW_Constructor:
	case SW_Allocator:
	case SW_Destructor:
	case SW_Deallocator:
	case SW_IsolatedDeallocator:
	case SW_ExplicitClosure:
	case SW_ImplicitClosure:
	case SW_Static:
	case SW_Extension:
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
	case SW_InitAccessor:
	case SW_Initializer:
	case SW_DefaultArgumentInitializer:
	case SW_IVarInitializer:
	case SW_IVarDestroyer:
	case SW_AnonymousContext:
	case SW_ModuleContextLocation:
	case SW_MacroExpansion:
	case SW_UniqueName:
	case SW_OpaqueReturnType:
	case SW_Entity: return 1;
	}
	return 0;
}

static int is_decl_name(int k)
{
	return k == SW_Identifier || k == SW_LocalDeclName || k == SW_PrivateDeclName || k == SW_InfixOperator ||
	       k == SW_PrefixOperator || k == SW_PostfixOperator || k == SW_RelatedEntityDeclName;
}

static int pop_decl_name(sw_ctx *c)
{
	if (c->sp && is_decl_name(top_kind(c)))
		return pop(c);
	return -1;
}

/* A context: a module (an identifier in context position), a nominal type or another entity. */
static int pop_context(sw_ctx *c)
{
	int k = top_kind(c);
	if (k == SW_Identifier) {
		/* a new node: the identifier may be a substitution used elsewhere as a name */
		int id = pop(c);
		return sw_new_text(c, SW_Module, c->nodes[id].text, c->nodes[id].tlen);
	}
	if (k == SW_Type) {
		int t = pop(c);
		int in = sw_kid(c, t, 0);
		if (in >= 0 &&
		    (is_context_kind(c->nodes[in].kind) || c->nodes[in].kind == SW_BoundGenericClass ||
		     c->nodes[in].kind == SW_BoundGenericStructure || c->nodes[in].kind == SW_BoundGenericEnum ||
		     c->nodes[in].kind == SW_BoundGenericOtherNominal))
			return in;
		c->fail = 1;
		return -1;
	}
	if (k >= 0 && is_context_kind(k))
		return pop(c);
	c->fail = 1;
	return -1;
}

static int pop_type(sw_ctx *c)
{
	return pop_kind(c, SW_Type);
}

/* ---------------------------------------------------------------- lexing */

static int peek(sw_ctx *c)
{
	return c->pos < c->n ? (unsigned char)c->s[c->pos] : 0;
}
static int next(sw_ctx *c)
{
	return c->pos < c->n ? (unsigned char)c->s[c->pos++] : 0;
}
static int eat(sw_ctx *c, int ch)
{
	if (peek(c) == ch) {
		c->pos++;
		return 1;
	}
	return 0;
}
static int is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}
static int is_lower(int ch)
{
	return ch >= 'a' && ch <= 'z';
}
static int is_upper(int ch)
{
	return ch >= 'A' && ch <= 'Z';
}

static int64_t natural(sw_ctx *c)
{
	if (!is_digit(peek(c)))
		return -1;
	int64_t v = 0;
	while (is_digit(peek(c))) {
		v = v * 10 + (next(c) - '0');
		if (v > 100000000) {
			c->fail = 1;
			return -1;
		}
	}
	return v;
}

/* INDEX ::= '_' (0) | NATURAL '_' (NATURAL + 1) */
static int64_t index_(sw_ctx *c)
{
	if (eat(c, '_'))
		return 0;
	int64_t v = natural(c);
	if (v < 0 || !eat(c, '_'))
		return -1;
	return v + 1;
}

static char *arena_alloc(sw_ctx *c, size_t n)
{
	if (c->narena + n > SW_ARENA) {
		c->fail = 1;
		return NULL;
	}
	char *p = c->arena + c->narena;
	c->narena += n;
	return p;
}

/* Punycode (RFC 3492) with Swift's digit alphabet a-z then A-J for 26..35 and '_' as delimiter;
 * output is UTF-8. */
int sw_punycode(sw_ctx *c, const char *in, size_t len, const char **out, size_t *olen)
{
	uint32_t cps[256];
	size_t ncp = 0;
	size_t d = len;
	while (d > 0 && in[d - 1] != '_')
		d--;
	size_t b = d ? d - 1 : 0;
	for (size_t i = 0; i < b; i++) {
		if ((unsigned char)in[i] >= 0x80 || ncp >= 256)
			return -1;
		cps[ncp++] = (unsigned char)in[i];
	}
	uint32_t n = 128, bias = 72, i = 0;
	size_t p = d ? d : 0;
	if (!d)
		p = 0;
	while (p < len) {
		uint32_t oldi = i, w = 1;
		for (uint32_t k = 36;; k += 36) {
			if (p >= len)
				return -1;
			int ch = (unsigned char)in[p++];
			uint32_t dg;
			if (ch >= 'a' && ch <= 'z')
				dg = (uint32_t)(ch - 'a');
			else if (ch >= 'A' && ch <= 'J')
				dg = (uint32_t)(ch - 'A' + 26);
			else
				return -1;
			if (dg > (0x7fffffffu - i) / w)
				return -1;
			i += dg * w;
			uint32_t t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
			if (dg < t)
				break;
			if (w > 0x7fffffffu / (36 - t))
				return -1;
			w *= 36 - t;
		}
		/* adapt */
		uint32_t delta = i - oldi;
		delta = oldi == 0 ? delta / 700 : delta / 2;
		delta += delta / (uint32_t)(ncp + 1);
		uint32_t k = 0;
		while (delta > ((36 - 1) * 26) / 2) {
			delta /= 35;
			k += 36;
		}
		bias = k + (36 * delta) / (delta + 38);
		if (i / (ncp + 1) > 0x10ffff)
			return -1;
		n += i / (uint32_t)(ncp + 1);
		i %= (uint32_t)(ncp + 1);
		if (n > 0x10ffff || ncp >= 256)
			return -1;
		memmove(&cps[i + 1], &cps[i], (ncp - i) * sizeof(uint32_t));
		cps[i++] = n;
		ncp++;
	}
	char *o = arena_alloc(c, ncp * 4 + 1);
	if (!o)
		return -1;
	size_t k = 0;
	for (size_t j = 0; j < ncp; j++) {
		uint32_t u = cps[j];
		if (u >= 0xD800 && u < 0xD880)
			u -= 0xD800; /* an ASCII character an identifier could not hold (raw identifiers) */
		if (u < 0x80)
			o[k++] = (char)u;
		else if (u < 0x800) {
			o[k++] = (char)(0xc0 | (u >> 6));
			o[k++] = (char)(0x80 | (u & 63));
		} else if (u < 0x10000) {
			o[k++] = (char)(0xe0 | (u >> 12));
			o[k++] = (char)(0x80 | ((u >> 6) & 63));
			o[k++] = (char)(0x80 | (u & 63));
		} else {
			o[k++] = (char)(0xf0 | (u >> 18));
			o[k++] = (char)(0x80 | ((u >> 12) & 63));
			o[k++] = (char)(0x80 | ((u >> 6) & 63));
			o[k++] = (char)(0x80 | (u & 63));
		}
	}
	*out = o;
	*olen = k;
	c->narena -= ncp * 4 + 1 - k;
	return 0;
}

static int is_word_start(int ch)
{
	return !is_digit(ch) && ch != '_' && ch != 0;
}
static int is_word_end(int ch, int prev)
{
	if (ch == '_' || ch == 0)
		return 1;
	return !is_upper(prev) && is_upper(ch);
}

static void add_words(sw_ctx *c, const char *p, size_t len)
{
	/* Words are runs starting at a non-digit, non-'_' character and ending before an uppercase
	 * letter following a non-uppercase one, or before '_'; only words of 2+ characters count. */
	size_t ws = 0;
	int in = 0;
	for (size_t i = 0; i <= len; i++) {
		int ch = i < len ? (unsigned char)p[i] : 0;
		if (in) {
			int prev = (unsigned char)p[i - 1];
			if (is_word_end(ch, prev)) {
				if (i - ws >= 2 && c->nwords < 26) {
					c->words[c->nwords].p = p + ws;
					c->words[c->nwords].len = (uint32_t)(i - ws);
					c->nwords++;
				}
				in = 0;
			}
		}
		if (!in && i < len && is_word_start(ch)) {
			in = 1;
			ws = i;
		}
	}
}

/* identifier ::= NATURAL IDENTIFIER | '0' (word substitutions) | '00' punycode */
static int identifier(sw_ctx *c)
{
	int has_words = 0, puny = 0;
	if (eat(c, '0')) {
		if (eat(c, '0'))
			puny = 1;
		else
			has_words = 1;
	}
	if (!has_words) {
		int64_t len = natural(c);
		/* punycode starting with a digit or '_' is set apart from the length by one '_' */
		if (puny && len > 0)
			eat(c, '_');
		if (len <= 0 || (size_t)len > c->n - c->pos) {
			c->fail = 1;
			return -1;
		}
		const char *p = c->s + c->pos;
		c->pos += (size_t)len;
		if (puny) {
			const char *o;
			size_t ol;
			if (sw_punycode(c, p, (size_t)len, &o, &ol) < 0) {
				c->fail = 1;
				return -1;
			}
			int n = sw_new_text(c, SW_Identifier, o, ol);
			add_subst(c, n);
			return n;
		}
		add_words(c, p, (size_t)len);
		int n = sw_new_text(c, SW_Identifier, p, (size_t)len);
		add_subst(c, n);
		return n;
	}
	/* word substitutions: [a-z] reuses a word, [A-Z] reuses the last one; NATURAL + text is a
	 * literal part (whose words become reusable); after the last word, one more literal part or
	 * '0' ends the identifier */
	char buf[512];
	size_t bl = 0;
	int words_on = 1;
	for (;;) {
		while (words_on && (is_lower(peek(c)) || is_upper(peek(c)))) {
			int ch = next(c);
			int wi = is_lower(ch) ? ch - 'a' : ch - 'A';
			if (is_upper(ch))
				words_on = 0;
			if (wi >= c->nwords || bl + c->words[wi].len > sizeof buf) {
				c->fail = 1;
				return -1;
			}
			memcpy(buf + bl, c->words[wi].p, c->words[wi].len);
			bl += c->words[wi].len;
		}
		if (eat(c, '0'))
			break;
		int64_t len = natural(c);
		if (len <= 0 || (size_t)len > c->n - c->pos || bl + (size_t)len > sizeof buf) {
			c->fail = 1;
			return -1;
		}
		add_words(c, c->s + c->pos, (size_t)len);
		memcpy(buf + bl, c->s + c->pos, (size_t)len);
		c->pos += (size_t)len;
		bl += (size_t)len;
		if (!words_on)
			break;
	}
	if (!bl) {
		c->fail = 1;
		return -1;
	}
	char *o = arena_alloc(c, bl);
	if (!o)
		return -1;
	memcpy(o, buf, bl);
	int n = sw_new_text(c, SW_Identifier, o, bl);
	add_subst(c, n);
	return n;
}

/* ---------------------------------------------------------------- types */

static int mk_type(sw_ctx *c, int inner)
{
	return mk1(c, SW_Type, inner);
}

static int swift_module(sw_ctx *c)
{
	return mktext(c, SW_Module, "Swift");
}

static int nominal(sw_ctx *c, int kind)
{
	int name = pop_decl_name(c);
	int ctx = pop_context(c);
	int n = mk2(c, kind, ctx, name);
	int t = mk_type(c, n);
	add_subst(c, t);
	return t;
}

static int std_type(sw_ctx *c, int ch)
{
	static const struct {
		char ch;
		char kind;
		const char *name;
	} tab[] = {
	    {'A', 'V', "AutoreleasingUnsafeMutablePointer"},
	    {'a', 'V', "Array"},
	    {'b', 'V', "Bool"},
	    {'c', 'V', "UnicodeScalar"},
	    {'D', 'V', "Dictionary"},
	    {'d', 'V', "Double"},
	    {'f', 'V', "Float"},
	    {'h', 'V', "Set"},
	    {'I', 'V', "DefaultIndices"},
	    {'i', 'V', "Int"},
	    {'J', 'V', "Character"},
	    {'N', 'V', "ClosedRange"},
	    {'n', 'V', "Range"},
	    {'O', 'V', "ObjectIdentifier"},
	    {'P', 'V', "UnsafePointer"},
	    {'p', 'V', "UnsafeMutablePointer"},
	    {'R', 'V', "UnsafeBufferPointer"},
	    {'r', 'V', "UnsafeMutableBufferPointer"},
	    {'S', 'V', "String"},
	    {'s', 'V', "Substring"},
	    {'u', 'V', "UInt"},
	    {'V', 'V', "UnsafeRawPointer"},
	    {'v', 'V', "UnsafeMutableRawPointer"},
	    {'W', 'V', "UnsafeRawBufferPointer"},
	    {'w', 'V', "UnsafeMutableRawBufferPointer"},
	    {'q', 'O', "Optional"},
	    {'Q', 'O', "ImplicitlyUnwrappedOptional"},
	    {'B', 'P', "BinaryFloatingPoint"},
	    {'E', 'P', "Encodable"},
	    {'e', 'P', "Decodable"},
	    {'F', 'P', "FloatingPoint"},
	    {'G', 'P', "RandomNumberGenerator"},
	    {'H', 'P', "Hashable"},
	    {'j', 'P', "Numeric"},
	    {'K', 'P', "BidirectionalCollection"},
	    {'k', 'P', "RandomAccessCollection"},
	    {'L', 'P', "Comparable"},
	    {'l', 'P', "Collection"},
	    {'M', 'P', "MutableCollection"},
	    {'m', 'P', "RangeReplaceableCollection"},
	    {'Q', 'P', "Equatable"},
	    {'T', 'P', "Sequence"},
	    {'t', 'P', "IteratorProtocol"},
	    {'U', 'P', "UnsignedInteger"},
	    {'X', 'P', "RangeExpression"},
	    {'x', 'P', "Strideable"},
	    {'Y', 'P', "RawRepresentable"},
	    {'y', 'P', "StringProtocol"},
	    {'Z', 'P', "SignedInteger"},
	    {'z', 'P', "BinaryInteger"},
	};
	static const struct {
		char ch;
		char kind;
		const char *name;
	} tabc[] = {
	    {'A', 'P', "Actor"},
	    {'C', 'V', "CheckedContinuation"},
	    {'c', 'V', "UnsafeContinuation"},
	    {'E', 'V', "CancellationError"},
	    {'e', 'V', "UnownedSerialExecutor"},
	    {'F', 'P', "Executor"},
	    {'f', 'P', "SerialExecutor"},
	    {'G', 'V', "TaskGroup"},
	    {'g', 'V', "ThrowingTaskGroup"},
	    {'h', 'P', "TaskExecutor"},
	    {'I', 'V', "AsyncIteratorProtocol"},
	    {'i', 'P', "AsyncSequence"},
	    {'J', 'V', "UnownedJob"},
	    {'M', 'C', "MainActor"},
	    {'P', 'V', "TaskPriority"},
	    {'S', 'V', "AsyncStream"},
	    {'s', 'V', "AsyncThrowingStream"},
	    {'T', 'V', "Task"},
	    {'t', 'V', "UnsafeCurrentTask"},
	};
	const char *name = NULL;
	int kind = 0;
	if (ch == 'c') {
		int d = next(c);
		for (size_t i = 0; i < sizeof tabc / sizeof tabc[0]; i++)
			if (tabc[i].ch == d) {
				name = tabc[i].name;
				kind = tabc[i].kind;
			}
		if (d == 'I')
			kind = 'P';
	} else {
		int seen_q = 0;
		for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
			if (tab[i].ch == ch) {
				if (ch == 'Q' && seen_q++)
					break;
				name = tab[i].name;
				kind = tab[i].kind;
				if (ch == 'Q')
					break;
			}
		/* 'SQ' is Equatable in the current mangling; ImplicitlyUnwrappedOptional is old */
		if (ch == 'Q') {
			name = "Equatable";
			kind = 'P';
		}
	}
	if (!name) {
		c->fail = 1;
		return -1;
	}
	int k = kind == 'V' ? SW_Structure : kind == 'O' ? SW_Enum : kind == 'C' ? SW_Class : SW_Protocol;
	return mk_type(c, mk2(c, k, swift_module(c), mktext(c, SW_Identifier, name)));
}

/* 'S' standard substitutions */
static int std_subst(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'o': return mktext(c, SW_Module, "__C");
	case 'C': return mktext(c, SW_Module, "__C_Synthesized");
	case 'g': {
		int t = pop_type(c);
		int n = mk_type(c, mk2(c, SW_BoundGenericEnum, std_type(c, 'q'), mk1(c, SW_TypeList, t)));
		add_subst(c, n);
		return n;
	}
	default: {
		int rep = 1;
		if (is_digit(ch)) {
			c->pos--;
			int64_t r = natural(c);
			if (r < 2 || r > 64) {
				c->fail = 1;
				return -1;
			}
			rep = (int)r;
			ch = next(c);
		}
		int t = std_type(c, ch);
		if (t < 0)
			return -1;
		for (int i = 1; i < rep; i++)
			push(c, t);
		return t;
	}
	}
}

static int builtin(sw_ctx *c)
{
	int ch = next(c);
	char buf[64];
	const char *name = NULL;
	switch (ch) {
	case 'b': name = "Builtin.BridgeObject"; break;
	case 'B': name = "Builtin.UnsafeValueBuffer"; break;
	case 'e': name = "Builtin.Executor"; break;
	case 'c': name = "Builtin.RawUnsafeContinuation"; break;
	case 'D': name = "Builtin.DefaultActorStorage"; break;
	case 'd': name = "Builtin.NonDefaultDistributedActorStorage"; break;
	case 'j': name = "Builtin.Job"; break;
	case 'A': name = "Builtin.ImplicitActor"; break;
	case 'P': name = "Builtin.PackIndex"; break;
	case 'o': name = "Builtin.NativeObject"; break;
	case 'O': name = "Builtin.UnknownObject"; break;
	case 'p': name = "Builtin.RawPointer"; break;
	case 't': name = "Builtin.SILToken"; break;
	case 'w': name = "Builtin.Word"; break;
	case 'I': name = "Builtin.IntLiteral"; break;
	case 'V': {
		int elem = pop_type(c);
		int count = pop_type(c);
		if (elem < 0 || count < 0)
			return c->fail = 1, -1;
		int tl = mk2(c, SW_TypeList, count, elem);
		int t = mk_type(c, mk2(c, SW_BoundGenericStructure,
		                       mk_type(c, mktext(c, SW_BuiltinType, "Builtin.FixedArray")), tl));
		add_subst(c, t);
		return t;
	}
	case 'f':
	case 'i': {
		int64_t bits = index_(c);
		if (bits <= 1 || bits > 4096) {
			c->fail = 1;
			return -1;
		}
		snprintf(buf, sizeof buf, "Builtin.%s%lld", ch == 'f' ? "FPIEEE" : "Int", (long long)(bits - 1));
		break;
	}
	case 'v': {
		int64_t n = index_(c);
		int et = pop_type(c);
		if (n <= 1 || et < 0) {
			c->fail = 1;
			return -1;
		}
		int in = sw_kid(c, et, 0);
		if (in < 0 || c->nodes[in].kind != SW_BuiltinType || c->nodes[in].tlen < 8 ||
		    memcmp(c->nodes[in].text, "Builtin.", 8)) {
			c->fail = 1;
			return -1;
		}
		snprintf(buf, sizeof buf, "Builtin.Vec%lldx%.*s", (long long)(n - 1), (int)c->nodes[in].tlen - 8,
		         c->nodes[in].text + 8);
		break;
	}
	default: c->fail = 1; return -1;
	}
	if (!name) {
		size_t l = strlen(buf);
		char *o = arena_alloc(c, l);
		if (!o)
			return -1;
		memcpy(o, buf, l);
		int t = mk_type(c, sw_new_text(c, SW_BuiltinType, o, l));
		add_subst(c, t);
		return t;
	}
	int t = mk_type(c, mktext(c, SW_BuiltinType, name));
	add_subst(c, t);
	return t;
}

static int pop_type_list(sw_ctx *c)
{
	int root = sw_new(c, SW_TypeList);
	if (pop_kind(c, SW_EmptyList) >= 0)
		return root;
	int first;
	do {
		first = pop_kind(c, SW_FirstElementMarker) >= 0;
		int t = pop_type(c);
		if (t < 0) {
			c->fail = 1;
			return -1;
		}
		sw_add(c, root, t);
	} while (!first);
	reverse_kids(c, root, 0);
	return root;
}

static int bound_kind(int k)
{
	switch (k) {
	case SW_Class: return SW_BoundGenericClass;
	case SW_Structure: return SW_BoundGenericStructure;
	case SW_Enum: return SW_BoundGenericEnum;
	case SW_Protocol: return SW_BoundGenericProtocol;
	case SW_TypeAlias: return SW_BoundGenericTypeAlias;
	case SW_OtherNominal: return SW_BoundGenericOtherNominal;
	}
	return -1;
}

static int consumes_args(int k)
{
	switch (k) {
	case SW_Variable:
	case SW_ImplicitClosure:
	case SW_ExplicitClosure:
	case SW_DefaultArgumentInitializer:
	case SW_Initializer:
	case SW_Static:
	case SW_Getter:
	case SW_Setter:
	case SW_ModifyAccessor:
	case SW_ReadAccessor: return 0;
	}
	return 1;
}

/* Apply the per-level argument lists to a nominal type and its generic parents (a local type's
 * parents are found through the functions it is declared in). */
static int bind_args(sw_ctx *c, int nominal, int *lists, int nlists, int level)
{
	if (nominal < 0 || ++c->depth > SW_MAX_DEPTH) {
		c->fail = 1;
		return -1;
	}
	int k = c->nodes[nominal].kind;
	int consumes = consumes_args(k);
	int args = lists[level];
	if (consumes)
		level++;
	int res = nominal;
	if (level < nlists && c->nodes[nominal].nkids > 0) {
		int ctx = sw_kid(c, nominal, 0);
		int bp;
		if (c->nodes[ctx].kind == SW_Extension) {
			int bt = bind_args(c, sw_kid(c, ctx, 1), lists, nlists, level);
			bp = sw_new(c, SW_Extension);
			for (int i = 0; i < c->nodes[ctx].nkids; i++)
				sw_add(c, bp, i == 1 ? bt : sw_kid(c, ctx, i));
		} else if (c->nodes[ctx].kind == SW_Module) {
			/* more argument lists than generic levels */
			c->fail = 1;
			c->depth--;
			return -1;
		} else
			bp = bind_args(c, ctx, lists, nlists, level);
		res = sw_new_index(c, k, c->nodes[nominal].index);
		if (res >= 0) {
			c->nodes[res].text = c->nodes[nominal].text;
			c->nodes[res].tlen = c->nodes[nominal].tlen;
		}
		sw_add(c, res, bp);
		for (int i = 1; i < c->nodes[nominal].nkids; i++)
			sw_add(c, res, sw_kid(c, nominal, i));
	}
	if (consumes && c->nodes[args].nkids > 0) {
		if (k == SW_Function || k == SW_Constructor || k == SW_Allocator || k == SW_Subscript) {
			c->depth--;
			return mk2(c, SW_BoundGenericFunction, res, args);
		}
		int bk = bound_kind(k);
		if (bk < 0) {
			c->fail = 1;
			c->depth--;
			return -1;
		}
		res = mk2(c, bk, mk_type(c, res), args);
	}
	c->depth--;
	return res;
}

static int bound_generic(sw_ctx *c)
{
	int lists[32];
	int nl = 0;
	/* retroactive conformances are dropped from the printed form */
	while (top_kind(c) == SW_RetroactiveConformance)
		pop(c);
	for (;;) {
		if (nl >= 32) {
			c->fail = 1;
			return -1;
		}
		int tl = sw_new(c, SW_TypeList);
		int t;
		while ((t = pop_type(c)) >= 0)
			sw_add(c, tl, t);
		reverse_kids(c, tl, 0);
		lists[nl++] = tl;
		if (pop_kind(c, SW_EmptyList) >= 0)
			break;
		if (pop_kind(c, SW_FirstElementMarker) < 0) {
			c->fail = 1;
			return -1;
		}
	}
	int nom = pop_type(c);
	if (nom < 0) {
		c->fail = 1;
		return -1;
	}
	int in = sw_kid(c, nom, 0);
	int b = bind_args(c, in, lists, nl, 0);
	int t = mk_type(c, b);
	add_subst(c, t);
	return t;
}

/* params or result of a function type: 'y' is the empty tuple */
static int pop_fn_params(sw_ctx *c, int kind)
{
	int t;
	if (pop_kind(c, SW_EmptyList) >= 0)
		t = mk_type(c, sw_new(c, SW_Tuple));
	else
		t = pop_type(c);
	return mk1(c, kind, t);
}

static int pop_function_type(sw_ctx *c, int kind)
{
	int f = sw_new(c, kind);
	int attrs[8], na = 0;
	int cl = pop_kind(c, SW_ClangType);
	for (;;) {
		int k = top_kind(c);
		if ((k == SW_ThrowsAnnotation || k == SW_TypedThrowsAnnotation || k == SW_AsyncAnnotation ||
		     k == SW_ConcurrentFunctionType || k == SW_GlobalActorFunctionType ||
		     k == SW_IsolatedAnyFunctionType || k == SW_NonIsolatedCallerFunctionType ||
		     k == SW_SendingResultFunctionType || k == SW_DifferentiableFunctionType) &&
		    na < 8)
			attrs[na++] = pop(c);
		else
			break;
	}
	if (cl >= 0)
		sw_add(c, f, cl);
	for (int i = na - 1; i >= 0; i--)
		sw_add(c, f, attrs[i]);
	sw_add(c, f, pop_fn_params(c, SW_ArgumentTuple));
	sw_add(c, f, pop_fn_params(c, SW_ReturnType));
	return mk_type(c, f);
}

static int fn_type_of(sw_ctx *c, int type)
{
	if (type < 0 || c->nodes[type].kind != SW_Type)
		return -1;
	int f = sw_kid(c, type, 0);
	if (f >= 0 && c->nodes[f].kind == SW_DependentGenericType)
		f = sw_kid(c, sw_kid(c, f, 1), 0);
	if (f < 0)
		return -1;
	int k = c->nodes[f].kind;
	if (k != SW_FunctionType && k != SW_NoEscapeFunctionType)
		return -1;
	return f;
}

static int params_tuple(sw_ctx *c, int fn)
{
	for (int i = 0; i < c->nodes[fn].nkids; i++) {
		int a = sw_kid(c, fn, i);
		if (c->nodes[a].kind == SW_ArgumentTuple)
			return sw_kid(c, sw_kid(c, a, 0), 0);
	}
	return -1;
}

static int pop_param_labels(sw_ctx *c, int type)
{
	if (!c->old_fn && pop_kind(c, SW_EmptyList) >= 0)
		return sw_new(c, SW_LabelList);
	int fn = fn_type_of(c, type);
	if (fn < 0)
		return -1;
	int tup = params_tuple(c, fn);
	if (tup < 0 || c->nodes[tup].kind != SW_Tuple) {
		return c->old_fn ? sw_new(c, SW_LabelList) : -1;
	}
	int np = c->nodes[tup].nkids;
	if (np == 0)
		return -1;
	int ll = sw_new(c, SW_LabelList);
	int has = 0;
	for (int i = 0; i < np; i++) {
		int lab;
		if (c->old_fn) {
			int el = sw_kid(c, tup, i);
			int nm = -1;
			for (int j = 0; j < c->nodes[el].nkids; j++)
				if (c->nodes[sw_kid(c, el, j)].kind == SW_TupleElementName)
					nm = sw_kid(c, el, j);
			if (nm >= 0) {
				lab = sw_new_text(c, SW_Identifier, c->nodes[nm].text, c->nodes[nm].tlen);
				has = 1;
			} else
				lab = sw_new(c, SW_FirstElementMarker);
		} else {
			int k = top_kind(c);
			if (k != SW_Identifier && k != SW_FirstElementMarker)
				return -1;
			lab = pop(c);
			if (k == SW_Identifier)
				has = 1;
		}
		sw_add(c, ll, lab);
	}
	if (!has)
		return sw_new(c, SW_LabelList);
	if (!c->old_fn)
		reverse_kids(c, ll, 0);
	return ll;
}

static int pop_generic_sig_type(sw_ctx *c, int t)
{
	int sig = pop_kind(c, SW_DependentGenericSignature);
	if (sig >= 0 && t >= 0)
		return mk_type(c, mk2(c, SW_DependentGenericType, sig, t));
	return t;
}

/* ---------------------------------------------------------------- entities */

static int entity(sw_ctx *c, int kind, int with_name, int with_type)
{
	int type = -1, labels = -1, name = -1;
	if (with_type) {
		type = pop_type(c);
		if (type < 0)
			return c->fail = 1, -1;
		type = pop_generic_sig_type(c, type);
		labels = pop_param_labels(c, type);
	}
	if (with_name) {
		name = pop_decl_name(c);
		if (name < 0)
			return c->fail = 1, -1;
	}
	int ctx = pop_context(c);
	int e = sw_new(c, kind);
	sw_add(c, e, ctx);
	if (name >= 0)
		sw_add(c, e, name);
	if (labels >= 0)
		sw_add(c, e, labels);
	if (type >= 0)
		sw_add(c, e, type);
	return e;
}

static int plain_function(sw_ctx *c)
{
	int sig = pop_kind(c, SW_DependentGenericSignature);
	int type = pop_function_type(c, SW_FunctionType);
	if (sig >= 0)
		type = mk_type(c, mk2(c, SW_DependentGenericType, sig, type));
	int labels = pop_param_labels(c, type);
	int name = pop_decl_name(c);
	if (name < 0)
		return c->fail = 1, -1;
	int ctx = pop_context(c);
	int f = sw_new(c, SW_Function);
	sw_add(c, f, ctx);
	sw_add(c, f, name);
	if (labels >= 0)
		sw_add(c, f, labels);
	sw_add(c, f, type);
	return f;
}

static int accessor(sw_ctx *c, int storage, int kind)
{
	return mk1(c, kind, storage);
}

static int subscript_or_var(sw_ctx *c, int is_sub)
{
	int type = pop_type(c);
	if (type < 0)
		return c->fail = 1, -1;
	type = pop_generic_sig_type(c, type);
	int labels = is_sub ? pop_param_labels(c, type) : -1;
	/* a variable of function type may carry an empty parameter label list; it prints nothing */
	if (!is_sub && !c->old_fn && type >= 0 && c->nodes[type].kind == SW_Type) {
		int fk = c->nodes[sw_kid(c, type, 0)].kind;
		if (fk == SW_FunctionType || fk == SW_NoEscapeFunctionType || fk == SW_CFunctionPointer ||
		    fk == SW_ObjCBlock)
			pop_kind(c, SW_EmptyList);
	}
	int name = -1;
	if (is_sub) {
		int k = top_kind(c);
		if (k == SW_PrivateDeclName)
			name = pop(c);
	} else {
		name = pop_decl_name(c);
		if (name < 0)
			return c->fail = 1, -1;
	}
	int ctx = pop_context(c);
	int v = sw_new(c, is_sub ? SW_Subscript : SW_Variable);
	sw_add(c, v, ctx);
	if (name >= 0)
		sw_add(c, v, name);
	if (labels >= 0)
		sw_add(c, v, labels);
	sw_add(c, v, type);
	return v;
}

/* 'v' / 'i' followed by an accessor code; a bare variable otherwise ('p') */
static int accessor_op(sw_ctx *c, int storage)
{
	int ch = next(c);
	int k;
	switch (ch) {
	case 'm': k = SW_MaterializeForSet; break;
	case 's': k = SW_Setter; break;
	case 'g': k = SW_Getter; break;
	case 'G': k = SW_GlobalGetter; break;
	case 'w': k = SW_WillSet; break;
	case 'W': k = SW_DidSet; break;
	case 'r': k = SW_ReadAccessor; break;
	case 'M': k = SW_ModifyAccessor; break;
	case 'x': k = SW_Modify2; break;
	case 'y': k = SW_Read2; break;
	case 'i': k = SW_InitAccessor; break;
	case 'a':
		switch (next(c)) {
		case 'O': k = SW_OwningMutableAddressor; break;
		case 'o': k = SW_NativeOwningMutableAddressor; break;
		case 'p': k = SW_NativePinningMutableAddressor; break;
		case 'u': k = SW_UnsafeMutableAddressor; break;
		default: return c->fail = 1, -1;
		}
		break;
	case 'l':
		switch (next(c)) {
		case 'O': k = SW_OwningAddressor; break;
		case 'o': k = SW_NativeOwningAddressor; break;
		case 'p': k = SW_NativePinningAddressor; break;
		case 'u': k = SW_UnsafeAddressor; break;
		default: return c->fail = 1, -1;
		}
		break;
	case 'p': return storage;
	default: return c->fail = 1, -1;
	}
	return accessor(c, storage, k);
}

/* 'fM' KIND: a macro expansion, or 'fMX' LINE COLUMN, the place (module, file) one happened. The
 * node's text says what kind of expansion; its kids are the context, the macro's name, the name
 * of the declaration an attached macro is attached to, and a freestanding one's file
 * discriminator. */
static int macro_expansion(sw_ctx *c)
{
	int ch = next(c);
	const char *what;
	int attached = 1;
	switch (ch) {
	case 'a': what = "accessor"; break;
	case 'r': what = "member attribute"; break;
	case 'm': what = "member"; break;
	case 'p': what = "peer"; break;
	case 'c': what = "conformance"; break;
	case 'e': what = "extension"; break;
	case 'q': what = "preamble"; break;
	case 'b': what = "body"; break;
	case 'f': what = "f", attached = 0; break;
	case 'u': what = "u", attached = 0; break;
	case 'X': {
		int64_t line = index_(c), col = index_(c);
		if (line < 0 || col < 0)
			return c->fail = 1, -1;
		int file = pop_kind(c, SW_Identifier);
		int mod = pop_kind(c, SW_Identifier);
		if (file < 0 || mod < 0)
			return c->fail = 1, -1;
		int n = sw_new(c, SW_ModuleContextLocation);
		sw_add(c, n, mod);
		sw_add(c, n, file);
		sw_add(c, n, sw_new_index(c, SW_Number, (uint64_t)line));
		sw_add(c, n, sw_new_index(c, SW_Number, (uint64_t)col));
		return n;
	}
	default: return c->fail = 1, -1;
	}
	int name = pop_kind(c, SW_Identifier);
	int priv = ch == 'f' ? pop_kind(c, SW_PrivateDeclName) : -1;
	int on = attached ? pop_decl_name(c) : -1;
	if (name < 0 || (attached && on < 0))
		return c->fail = 1, -1;
	int ctx = top_kind(c) == SW_ModuleContextLocation ? pop(c) : pop_context(c);
	int64_t idx = index_(c);
	if (ctx < 0 || idx < 0)
		return c->fail = 1, -1;
	int n = sw_new_text(c, ch == 'u' ? SW_UniqueName : SW_MacroExpansion, what, strlen(what));
	c->nodes[n].index = (uint64_t)idx;
	sw_add(c, n, ctx);
	sw_add(c, n, name);
	if (on >= 0)
		sw_add(c, n, on);
	if (priv >= 0)
		sw_add(c, n, priv);
	return n;
}

static int function_entity(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'D': return entity(c, SW_Deallocator, 0, 0);
	case 'd': return entity(c, SW_Destructor, 0, 0);
	case 'Z': return entity(c, SW_IsolatedDeallocator, 0, 0);
	case 'E': return entity(c, SW_IVarDestroyer, 0, 0);
	case 'e': return entity(c, SW_IVarInitializer, 0, 0);
	case 'i': return entity(c, SW_Initializer, 0, 0);
	case 'C':
	case 'c': {
		int pn = pop_kind(c, SW_PrivateDeclName);
		int e = entity(c, ch == 'C' ? SW_Allocator : SW_Constructor, 0, 1);
		if (e >= 0 && pn >= 0) {
			/* the private name goes second, like an entity's name */
			int e2 = sw_new(c, c->nodes[e].kind);
			sw_add(c, e2, sw_kid(c, e, 0));
			sw_add(c, e2, pn);
			for (int i = 1; i < c->nodes[e].nkids; i++)
				sw_add(c, e2, sw_kid(c, e, i));
			e = e2;
		}
		return e;
	}
	case 'U':
	case 'u': {
		int64_t idx = index_(c);
		if (idx < 0)
			return c->fail = 1, -1;
		int type = pop_type(c);
		int ctx = pop_context(c);
		int n = sw_new_index(c, ch == 'U' ? SW_ExplicitClosure : SW_ImplicitClosure, (uint64_t)idx);
		sw_add(c, n, ctx);
		if (type >= 0)
			sw_add(c, n, type);
		return n;
	}
	case 'A': {
		int ctx = pop_context(c);
		return ctx < 0 ? -1 : mk1(c, SW_DefaultArgumentInitializer, ctx);
	}
	case 'm': return entity(c, SW_Function, 1, 1); /* a macro: printed like a function */
	case 'M': return macro_expansion(c);
	case 'P': {
		int v = pop(c);
		if (v < 0 || c->nodes[v].kind != SW_Variable)
			return c->fail = 1, -1;
		return attr_for(c, "property wrapper backing initializer of ", v);
	}
	default: return c->fail = 1, -1;
	}
}

/* ---------------------------------------------------------------- generic signatures */

static int gen_param(sw_ctx *c, int64_t depth, int64_t index)
{
	int n = sw_new(c, SW_DependentGenericParamType);
	if (n >= 0) {
		c->nodes[n].index = ((uint64_t)depth << 32) | (uint64_t)index;
	}
	return mk_type(c, n);
}

/* 'q' generic parameter: 'q' INDEX (depth 0) | 'qd' INDEX INDEX */
static int generic_param_q(sw_ctx *c)
{
	int64_t depth = 0, idx;
	if (eat(c, 'd')) {
		depth = index_(c);
		if (depth < 0)
			return c->fail = 1, -1;
		depth += 1;
		idx = index_(c);
	} else if (eat(c, 'z')) {
		idx = 0;
	} else
		idx = index_(c) + 1;
	if (idx < 0 || depth < 0 || idx > 100000)
		return c->fail = 1, -1;
	if (!eat(c, 0) && 0)
		return -1;
	return gen_param(c, depth, idx);
}

static int dep_assoc_ref(sw_ctx *c, int name, int proto)
{
	int r = sw_new(c, SW_DependentAssociatedTypeRef);
	sw_add(c, r, name);
	if (proto >= 0)
		sw_add(c, r, proto);
	return r;
}

static int pop_assoc_name(sw_ctx *c)
{
	int proto = -1;
	if (top_kind(c) == SW_Type) {
		int in = sw_kid(c, c->stack[c->sp - 1], 0);
		if (in >= 0 && c->nodes[in].kind == SW_Protocol)
			proto = pop(c);
	}
	int name = pop_kind(c, SW_Identifier);
	if (name < 0) {
		if (proto >= 0)
			push(c, proto);
		return c->fail = 1, -1;
	}
	return dep_assoc_ref(c, name, proto);
}

/* GENERIC-PARAM-INDEX ::= 'z' | INDEX (N+1) | 'd' INDEX INDEX | 's' (Self of a constrained existential) */
static int gpi(sw_ctx *c)
{
	if (eat(c, 'z'))
		return gen_param(c, 0, 0);
	if (eat(c, 's'))
		return mk_type(c, mktext(c, SW_Identifier, "Self"));
	if (eat(c, 'd')) {
		int64_t d = index_(c), i = index_(c);
		if (d < 0 || i < 0)
			return c->fail = 1, -1;
		return gen_param(c, d + 1, i);
	}
	int64_t i = index_(c);
	if (i < 0)
		return c->fail = 1, -1;
	return gen_param(c, 0, i + 1);
}

/* assoc-type-list ::= assoc-type-name '_' assoc-type-name*: a member chain on base */
static int assoc_path(sw_ctx *c, int base)
{
	int refs[32], n = 0, first;
	do {
		first = pop_kind(c, SW_FirstElementMarker) >= 0;
		if (n >= 32)
			return c->fail = 1, -1;
		int r = pop_assoc_name(c);
		if (r < 0)
			return -1;
		refs[n++] = r;
	} while (!first);
	if (base == -2)
		base = pop_type(c); /* "type assoc-type-list 'QX'": the base is under the names */
	if (base < 0)
		return c->fail = 1, -1;
	int t = base;
	for (int i = n - 1; i >= 0; i--)
		t = mk_type(c, mk2(c, SW_DependentMemberType, t, refs[i]));
	return t;
}

static int layout(sw_ctx *c, int subj)
{
	int lc = next(c);
	const char *name = NULL;
	int nargs = 0;
	switch (lc) {
	case 'U': name = "_UnknownLayout"; break;
	case 'R': name = "_RefCountedObject"; break;
	case 'N': name = "_NativeRefCountedObject"; break;
	case 'C': name = "AnyObject"; break;
	case 'D': name = "_NativeClass"; break;
	case 'T': name = "_Trivial"; break;
	case 'B': name = "_BridgeObject"; break;
	case 'E': name = "_Trivial", nargs = 2; break;
	case 'e': name = "_Trivial", nargs = 1; break;
	case 'M': name = "_TrivialAtMost", nargs = 2; break;
	case 'm': name = "_TrivialAtMost", nargs = 1; break;
	case 'S': name = "_TrivialStride", nargs = 1; break;
	default: return c->fail = 1, -1;
	}
	int req = mk2(c, SW_LayoutReq, subj, mktext(c, SW_LayoutConstraint, name));
	for (int i = 0; i < nargs; i++) {
		int64_t v = index_(c);
		if (v < 0)
			return c->fail = 1, -1;
		sw_add(c, req, sw_new_index(c, SW_Number, (uint64_t)v));
	}
	return req;
}

/* 'R' requirements (the grammar's "requirement"): conformance, base class, same type, layout,
 * inverse, same shape, pack markers; the subject is a generic parameter, an associated type of
 * one (one name or a list), or a substitution on the stack. */
static int requirement(sw_ctx *c)
{
	int ch = peek(c);
	int subj = -1, req = -1;
	if (ch == 'z' || ch == 'd' || ch == '_' || is_digit(ch)) {
		subj = gpi(c);
		return mk2(c, SW_ConformanceReq, subj, pop_protocol(c));
	}
	c->pos++;
	switch (ch) {
	case 'p':
	case 'c':
	case 't':
	case 'm':
	case 'j': {
		int64_t inv = -1;
		if (ch == 'j' && (inv = index_(c)) < 0)
			return c->fail = 1, -1;
		int ar = pop_assoc_name(c);
		subj = mk_type(c, mk2(c, SW_DependentMemberType, gpi(c), ar));
		add_subst(c, subj); /* an associated type, like 'Qy' */
		if (ch == 'p')
			return mk2(c, SW_ConformanceReq, subj, pop_protocol(c));
		if (ch == 'c')
			return mk2(c, SW_ConformanceReq, subj, pop_type(c));
		if (ch == 't')
			return mk2(c, SW_SameTypeReq, subj, pop_type(c));
		if (ch == 'j')
			return mk2(c, SW_InverseReq, subj, sw_new_index(c, SW_Index, (uint64_t)inv));
		return layout(c, subj);
	}
	case 'P':
	case 'C':
	case 'T':
	case 'M':
	case 'J': {
		int64_t inv = -1;
		if (ch == 'J' && (inv = index_(c)) < 0)
			return c->fail = 1, -1;
		int base = gpi(c);
		subj = assoc_path(c, base);
		if (subj < 0)
			return -1;
		add_subst(c, subj);
		if (ch == 'P')
			return mk2(c, SW_ConformanceReq, subj, pop_protocol(c));
		if (ch == 'C')
			return mk2(c, SW_ConformanceReq, subj, pop_type(c));
		if (ch == 'T')
			return mk2(c, SW_SameTypeReq, subj, pop_type(c));
		if (ch == 'J')
			return mk2(c, SW_InverseReq, subj, sw_new_index(c, SW_Index, (uint64_t)inv));
		return layout(c, subj);
	}
	case 'Q': subj = pop_type(c); return mk2(c, SW_ConformanceReq, subj, pop_protocol(c));
	case 'L': subj = pop_type(c); return layout(c, subj); /* Swift 4: layout of a substitution */
	case 'B': subj = pop_type(c); return mk2(c, SW_ConformanceReq, subj, pop_type(c));
	case 'S': subj = pop_type(c); return mk2(c, SW_SameTypeReq, subj, pop_type(c));
	case 'I': {
		subj = pop_type(c);
		int64_t inv = index_(c);
		if (inv < 0)
			return c->fail = 1, -1;
		return mk2(c, SW_InverseReq, subj, sw_new_index(c, SW_Index, (uint64_t)inv));
	}
	case 'b': subj = gpi(c); return mk2(c, SW_ConformanceReq, subj, pop_type(c));
	case 's': subj = gpi(c); return mk2(c, SW_SameTypeReq, subj, pop_type(c));
	case 'l': subj = gpi(c); return layout(c, subj);
	case 'i': {
		int64_t inv = index_(c);
		if (inv < 0)
			return c->fail = 1, -1;
		subj = gpi(c);
		return mk2(c, SW_InverseReq, subj, sw_new_index(c, SW_Index, (uint64_t)inv));
	}
	default: break;
	}
	(void)req;
	return c->fail = 1, -1;
}

/* 'l' (one generic parameter) / 'r' COUNT* 'l': close a generic signature over the requirements
 * pushed before it */
static int generic_signature(sw_ctx *c, int has_param_counts)
{
	int sig = sw_new(c, SW_DependentGenericSignature);
	int counts[64], nc = 0;
	if (has_param_counts) {
		while (!eat(c, 'l')) {
			int64_t n = 0;
			if (!eat(c, 'z')) {
				n = index_(c) + 1;
				if (n <= 0)
					return c->fail = 1, -1;
			}
			if (nc >= 64 || n > 10000)
				return c->fail = 1, -1;
			counts[nc++] = (int)n;
			if (c->pos >= c->n)
				return c->fail = 1, -1;
		}
	} else {
		counts[nc++] = 1;
	}
	for (int i = 0; i < nc; i++)
		sw_add(c, sig, sw_new_index(c, SW_GenericParamCount, (uint64_t)counts[i]));
	int reqs[128], nr = 0;
	int k;
	while ((k = top_kind(c)) == SW_ConformanceReq || k == SW_SameTypeReq || k == SW_LayoutReq ||
	       k == SW_InverseReq) {
		if (nr >= 128)
			return c->fail = 1, -1;
		reqs[nr++] = pop(c);
	}
	for (int i = nr - 1; i >= 0; i--)
		sw_add(c, sig, reqs[i]);
	return sig;
}

/* ---------------------------------------------------------------- operators */

static int op(sw_ctx *c);

static int tuple(sw_ctx *c)
{
	int t = sw_new(c, SW_Tuple);
	int label = -1;
	int first;
	if (pop_kind(c, SW_EmptyList) >= 0)
		return mk_type(c, t);
	int els[256], ne = 0;
	do {
		first = pop_kind(c, SW_FirstElementMarker) >= 0;
		int el = sw_new(c, SW_TupleElement);
		int var = pop_kind(c, SW_VariadicMarker);
		label = pop_kind(c, SW_Identifier);
		if (label >= 0)
			sw_add(c, el, sw_new_text(c, SW_TupleElementName, c->nodes[label].text, c->nodes[label].tlen));
		if (var >= 0)
			sw_add(c, el, var);
		int ty = pop_type(c);
		if (ty < 0)
			return c->fail = 1, -1;
		sw_add(c, el, ty);
		if (ne >= 256)
			return c->fail = 1, -1;
		els[ne++] = el;
	} while (!first);
	for (int i = ne - 1; i >= 0; i--)
		sw_add(c, t, els[i]);
	return mk_type(c, t);
}

static int metatype_op(sw_ctx *c);
static int witness_op(sw_ctx *c);
static int thunk_op(sw_ctx *c);
static int special_type(sw_ctx *c);
static int impl_function_type(sw_ctx *c);

static int local_or_private(sw_ctx *c)
{
	int ch = peek(c);
	if (ch == 'L') {
		c->pos++;
		int d = pop_kind(c, SW_Identifier);
		int name = pop_decl_name(c);
		if (d < 0 || name < 0)
			return c->fail = 1, -1;
		return mk2(c, SW_PrivateDeclName, d, name);
	}
	if (ch == 'l') {
		c->pos++;
		int d = pop_kind(c, SW_Identifier);
		if (d < 0)
			return c->fail = 1, -1;
		return mk1(c, SW_PrivateDeclName, d);
	}
	if ((ch >= 'a' && ch <= 'j') || (ch >= 'A' && ch <= 'J')) {
		c->pos++;
		int name = pop_decl_name(c);
		int rel = sw_new_text(c, SW_RelatedEntityDeclName, c->s + c->pos - 1, 1);
		sw_add(c, rel, name);
		return rel;
	}
	int64_t idx = index_(c);
	if (idx < 0)
		return c->fail = 1, -1;
	int name = pop_decl_name(c);
	return mk2(c, SW_LocalDeclName, sw_new_index(c, SW_Number, (uint64_t)idx), name);
}

static int multi_subst(sw_ctx *c)
{
	int rep = -1;
	for (;;) {
		int ch = next(c);
		if (ch == 0)
			return c->fail = 1, -1;
		if (is_lower(ch)) {
			int i = ch - 'a';
			if (i >= c->nsubst)
				return c->fail = 1, -1;
			int n = c->subst[i];
			if (rep < 0)
				rep = 1;
			for (int k = 0; k < rep; k++)
				push(c, n);
			rep = -1;
			continue;
		}
		if (is_upper(ch)) {
			int i = ch - 'A';
			if (i >= c->nsubst)
				return c->fail = 1, -1;
			int n = c->subst[i];
			if (rep < 0)
				rep = 1;
			for (int k = 0; k < rep - 1; k++)
				push(c, n);
			return n;
		}
		if (ch == '_') {
			int64_t i = natural(c);
			(void)i;
			return c->fail = 1, -1;
		}
		if (is_digit(ch)) {
			c->pos--;
			int64_t v = natural(c);
			if (v < 0)
				return c->fail = 1, -1;
			if (eat(c, '_')) {
				/* A NATURAL '_' : substitution index NATURAL + 26 */
				int64_t i = v + 26;
				if (i >= c->nsubst)
					return c->fail = 1, -1;
				return c->subst[i];
			}
			if (v > 256)
				return c->fail = 1, -1;
			rep = (int)v;
			continue;
		}
		return c->fail = 1, -1;
	}
}

static int op_A(sw_ctx *c)
{
	if (eat(c, '_')) {
		int64_t i = natural(c);
		(void)i;
		return c->fail = 1, -1;
	}
	if (is_digit(peek(c))) {
		size_t save = c->pos;
		int64_t v = natural(c);
		if (v >= 0 && eat(c, '_')) {
			int64_t i = v + 26;
			if (i >= c->nsubst)
				return c->fail = 1, -1;
			return c->subst[i];
		}
		c->pos = save;
	}
	return multi_subst(c);
}

static int op(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'A': return op_A(c);
	case 'B': return builtin(c);
	case 'C': return nominal(c, SW_Class);
	case 'D': {
		int t = pop_type(c);
		return t < 0 ? (c->fail = 1, -1) : mk1(c, SW_Entity, t);
	}
	case 'E': {
		/* extension: context module, extended type, optional signature */
		int sig = pop_kind(c, SW_DependentGenericSignature);
		int mod = pop_context(c);
		int t = pop_type(c);
		if (t < 0 || mod < 0)
			return c->fail = 1, -1;
		int e = mk2(c, SW_Extension, mod, sw_kid(c, t, 0));
		if (sig >= 0)
			sw_add(c, e, sig);
		return e;
	}
	case 'F': return plain_function(c);
	case 'G': return bound_generic(c);
	case 'I': return impl_function_type(c);
	case 'H': return conformance_op(c);
	case 'g': {
		/* retroactive-conformance ::= any-protocol-conformance 'g' INDEX (kept out of the printed form) */
		if (index_(c) < 0)
			return c->fail = 1, -1;
		int k = top_kind(c);
		if (k != SW_ConcreteProtocolConformance && k != SW_DependentConformance && k != SW_ConformanceList)
			return c->fail = 1, -1;
		return mk1(c, SW_RetroactiveConformance, pop(c));
	}
	case 'K': return sw_new(c, SW_ThrowsAnnotation);
	case 'L': return local_or_private(c);
	case 'M': return metatype_op(c);
	case 'N': {
		int t = pop_type(c);
		return t < 0 ? (c->fail = 1, -1) : attr_for(c, "type metadata for ", t);
	}
	case 'O': return nominal(c, SW_Enum);
	case 'P': return nominal(c, SW_Protocol);
	case 'Q': {
		int k = next(c);
		if (k == 'P') {
			/* a pack of the types in the list */
			int tl = pop_type_list(c);
			if (tl < 0)
				return c->fail = 1, -1;
			c->nodes[tl].kind = SW_Pack;
			return mk_type(c, tl); /* not a substitution candidate */
		}
		if (k == 'z' || k == 'y' || k == 'x') {
			int base;
			if (k == 'z')
				base = gen_param(c, 0, 0);
			else if (k == 'y') {
				base = gpi(c);
				if (base < 0)
					return -1;
			} else {
				base = pop_type(c);
			}
			int ar = pop_assoc_name(c);
			int t = mk_type(c, mk2(c, SW_DependentMemberType, base, ar));
			add_subst(c, t);
			return t;
		}
		if (k == 'Z' || k == 'Y' || k == 'X') {
			/* a path of associated types */
			int base;
			if (k == 'Z')
				base = gen_param(c, 0, 0);
			else if (k == 'Y')
				base = gpi(c);
			else
				base = -2;
			int t = assoc_path(c, base);
			if (t < 0)
				return -1;
			add_subst(c, t);
			return t;
		}
		if (k == 'r' || k == 'u')
			return mk_type(c, mktext(c, SW_OpaqueReturnType, "some"));
		if (k == 'R' || k == 'U') {
			if (index_(c) < 0)
				return c->fail = 1, -1;
			return mk_type(c, mktext(c, SW_OpaqueReturnType, "some"));
		}
		if (k == 'O') {
			int e = pop_any_entity(c);
			if (e >= 0 && c->nodes[e].kind == SW_Type)
				e = sw_kid(c, e, 0);
			return mk1(c, SW_OpaqueTypeDescriptorRef, e);
		}
		if (k == 'o') {
			int64_t i = index_(c);
			if (i < 0)
				return c->fail = 1, -1;
			/* bound-generic-args of the defining entity: not printed */
			while (c->sp && top_kind(c) != SW_OpaqueTypeDescriptorRef) {
				int tk = top_kind(c);
				if (tk != SW_Type && tk != SW_FirstElementMarker && tk != SW_EmptyList &&
				    tk != SW_RetroactiveConformance)
					return c->fail = 1, -1;
				pop(c);
			}
			int ref = pop_kind(c, SW_OpaqueTypeDescriptorRef);
			if (ref < 0)
				return c->fail = 1, -1;
			int n = sw_new_index(c, SW_OpaqueType, (uint64_t)i);
			sw_add(c, n, ref);
			int t = mk_type(c, n);
			add_subst(c, t);
			return t;
		}
		return c->fail = 1, -1;
	}
	case 'R': {
		int r = requirement(c);
		return r;
	}
	case 'S': return std_subst(c);
	case 'T': return thunk_op(c);
	case 'V': return nominal(c, SW_Structure);
	case 'W': return witness_op(c);
	case 'X': return special_type(c);
	case 'Y': {
		int k = next(c);
		switch (k) {
		case 'a': return sw_new(c, SW_AsyncAnnotation);
		case 'b': return sw_new(c, SW_ConcurrentFunctionType);
		case 'A': return sw_new(c, SW_IsolatedAnyFunctionType);
		case 'C': return sw_new(c, SW_NonIsolatedCallerFunctionType);
		case 'T': return sw_new(c, SW_SendingResultFunctionType);
		case 'c': {
			int t = pop_type(c);
			return mk1(c, SW_GlobalActorFunctionType, t);
		}
		case 'K': {
			int t = pop_type(c);
			return mk1(c, SW_TypedThrowsAnnotation, t);
		}
		case 'i': return mk_type(c, mk1(c, SW_Isolated, pop_type(c)));
		case 'u': return mk_type(c, mk1(c, SW_Sending, pop_type(c)));
		case 't': return mk_type(c, mk1(c, SW_CompileTimeLiteral, pop_type(c)));
		case 'k': return mk_type(c, mk1(c, SW_NoDerivative, pop_type(c)));
		case 'j': {
			int d = next(c);
			const char *s = d == 'f'   ? "@differentiable(_forward) "
			                : d == 'r' ? "@differentiable(reverse) "
			                : d == 'd' ? "@differentiable "
			                : d == 'l' ? "@differentiable(_linear) "
			                           : NULL;
			if (!s)
				return c->fail = 1, -1;
			return mktext(c, SW_DifferentiableFunctionType, s);
		}
		default: return c->fail = 1, -1;
		}
	}
	case 'Z': {
		int e = pop(c);
		if (e < 0 || !is_context_kind(c->nodes[e].kind))
			return c->fail = 1, -1;
		return mk1(c, SW_Static, e);
	}
	case 'a': return nominal(c, SW_TypeAlias);
	case 'c': return pop_function_type(c, SW_FunctionType);
	case 'd': return sw_new(c, SW_VariadicMarker);
	case 'f': return function_entity(c);
	case 'h': return mk_type(c, mk1(c, SW_Shared, pop_type(c)));
	case 'i': {
		int s = subscript_or_var(c, 1);
		return accessor_op(c, s);
	}
	case 'l': return generic_signature(c, 0);
	case 'm': {
		int t = pop_type(c);
		return mk_type(c, mk1(c, SW_Metatype, t));
	}
	case 'n': return mk_type(c, mk1(c, SW_Owned, pop_type(c)));
	case 'o': {
		int k = next(c);
		int name = pop_kind(c, SW_Identifier);
		if (name < 0)
			return c->fail = 1, -1;
		int kind = k == 'i'   ? SW_InfixOperator
		           : k == 'p' ? SW_PrefixOperator
		           : k == 'P' ? SW_PostfixOperator
		                      : -1;
		if (kind < 0)
			return c->fail = 1, -1;
		/* operator characters are spelled with letters */
		static const char letters[] = "acdeglmnoprstxzq";
		static const char chars[] = "&@/=><*!|+%-~^.?";
		sw_node *nm = &c->nodes[name];
		char *o = arena_alloc(c, nm->tlen);
		if (!o)
			return -1;
		for (uint32_t i = 0; i < nm->tlen; i++) {
			int oc = (unsigned char)nm->text[i];
			o[i] = (char)oc;
			if (is_lower(oc)) {
				const char *q = strchr(letters, oc);
				if (!q)
					return c->fail = 1, -1;
				o[i] = chars[q - letters];
			}
		}
		return sw_new_text(c, kind, o, nm->tlen);
	}
	case 'p': {
		/* existential: protocol list */
		int tl = pop_protocol_list(c);
		return mk_type(c, mk1(c, SW_ProtocolList, tl));
	}
	case 'q': return generic_param_q(c);
	case 'r': return generic_signature(c, 1);
	case 's': return mktext(c, SW_Module, "Swift");
	case 't': return tuple(c);
	case 'u': {
		int sig = pop_kind(c, SW_DependentGenericSignature);
		int t = pop_type(c);
		return mk_type(c, mk2(c, SW_DependentGenericType, sig, t));
	}
	case 'v': {
		int v = subscript_or_var(c, 0);
		return accessor_op(c, v);
	}
	case 'x': return gen_param(c, 0, 0);
	case 'y': return sw_new(c, SW_EmptyList);
	case 'z': return mk_type(c, mk1(c, SW_InOut, pop_type(c)));
	case '_': return sw_new(c, SW_FirstElementMarker);
	case '$': {
		/* an integer as a generic argument: '$' INDEX, '$n' INDEX for a negative one */
		int neg = eat(c, 'n');
		int64_t v = index_(c);
		if (v < 0)
			return c->fail = 1, -1;
		char buf[32];
		int l = snprintf(buf, sizeof buf, "%s%lld", neg ? "-" : "", (long long)v);
		char *o = arena_alloc(c, (size_t)l);
		if (!o)
			return -1;
		memcpy(o, buf, (size_t)l);
		return mk_type(c, sw_new_text(c, SW_Integer, o, (size_t)l));
	}
	case '.': {
		/* unmangled suffix */
		c->pos--;
		int s = sw_new_text(c, SW_Suffix, c->s + c->pos, c->n - c->pos);
		c->pos = c->n;
		return s;
	}
	default:
		if (is_digit(ch)) {
			c->pos--;
			return identifier(c);
		}
		return c->fail = 1, -1;
	}
}

/* ---------------------------------------------------------------- globals, witnesses, thunks */

static int attr_for(sw_ctx *c, const char *text, int child)
{
	if (child < 0)
		return c->fail = 1, -1;
	int n = mktext(c, SW_AttrFor, text);
	sw_add(c, n, child);
	return n;
}

static int attr(sw_ctx *c, const char *text)
{
	return mktext(c, SW_Attr, text);
}

static int pop_protocol(sw_ctx *c)
{
	int t = pop_type(c);
	if (t >= 0) {
		int in = sw_kid(c, t, 0);
		if (in < 0 || c->nodes[in].kind != SW_Protocol)
			return c->fail = 1, -1;
		return t;
	}
	int name = pop_decl_name(c);
	if (name < 0)
		return c->fail = 1, -1;
	int ctx = pop_context(c);
	return mk_type(c, mk2(c, SW_Protocol, ctx, name));
}

static int pop_conformance(sw_ctx *c)
{
	int sig = pop_kind(c, SW_DependentGenericSignature);
	int mod = pop_context(c);
	int proto = pop_protocol(c);
	int type = pop_type(c);
	if (mod < 0 || proto < 0 || type < 0)
		return c->fail = 1, -1;
	if (sig >= 0)
		type = mk_type(c, mk2(c, SW_DependentGenericType, sig, type));
	int n = sw_new(c, SW_ProtocolConformance);
	sw_add(c, n, type);
	sw_add(c, n, proto);
	sw_add(c, n, mod);
	return n;
}

static int pop_any_entity(sw_ctx *c)
{
	int k = top_kind(c);
	if (k == SW_Type)
		return pop(c);
	if (k >= 0 && is_context_kind(k))
		return pop(c);
	return c->fail = 1, -1;
}

/* protocol-list ::= protocol '_' protocol* | empty-list; a protocol may also be a bare context and
 * name */
static int pop_protocol_list(sw_ctx *c)
{
	int root = sw_new(c, SW_TypeList);
	if (pop_kind(c, SW_EmptyList) >= 0)
		return root;
	int first;
	do {
		first = pop_kind(c, SW_FirstElementMarker) >= 0;
		int t = pop_protocol(c);
		if (t < 0)
			return c->fail = 1, -1;
		sw_add(c, root, t);
	} while (!first && !c->fail);
	reverse_kids(c, root, 0);
	return root;
}

static int is_any_conformance(int k)
{
	return k == SW_ConcreteProtocolConformance || k == SW_DependentConformance || k == SW_ConformanceList;
}

/* any-protocol-conformance-list ::= conformance '_' conformance* | empty-list */
static int pop_conformance_list(sw_ctx *c)
{
	int l = sw_new(c, SW_ConformanceList);
	if (pop_kind(c, SW_EmptyList) >= 0)
		return l;
	int first;
	do {
		first = pop_kind(c, SW_FirstElementMarker) >= 0;
		if (!is_any_conformance(top_kind(c)))
			return c->fail = 1, -1;
		sw_add(c, l, pop(c));
	} while (!first && !c->fail);
	reverse_kids(c, l, 0);
	return l;
}

/* 'H' operators: protocol conformances (as generic arguments need them) and runtime records */
static int conformance_op(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'P':
	case 'p': {
		/* the text says where the conformance is: 'P' the type's module, 'p' the protocol's */
		int r = mk1(c, SW_ProtocolConformanceRef, pop_protocol(c));
		if (r >= 0) {
			c->nodes[r].text = ch == 'P' ? "P" : "p";
			c->nodes[r].tlen = 1;
		}
		return r;
	}
	case 'O': {
		/* a dependent conformance of an opaque type: not printed in names */
		int t = pop_type(c);
		int base = pop_kind(c, SW_DependentConformance);
		if (t < 0 || base < 0)
			return c->fail = 1, -1;
		return mk2(c, SW_DependentConformance, base, t);
	}
	case 'C': {
		int list = pop_conformance_list(c);
		int ref = pop_kind(c, SW_ProtocolConformanceRef);
		if (ref < 0) {
			/* retroactive: protocol module */
			int mod = pop_context(c);
			ref = mk2(c, SW_ProtocolConformanceRef, pop_protocol(c), mod);
		}
		int type = pop_type(c);
		if (list < 0 || type < 0 || ref < 0)
			return c->fail = 1, -1;
		int n = mk2(c, SW_ConcreteProtocolConformance, type, ref);
		sw_add(c, n, list);
		return n;
	}
	case 'D':
	case 'I':
	case 'A': {
		if (index_(c) < 0)
			return c->fail = 1, -1;
		int proto = pop_protocol(c);
		if (ch == 'A' && pop_type(c) < 0) /* the associated type of "type protocol 'HA'" */
			return c->fail = 1, -1;
		int base = ch == 'D' ? pop_type(c) : pop_kind(c, SW_DependentConformance);
		if (base < 0)
			return c->fail = 1, -1;
		return mk2(c, SW_DependentConformance, base, proto);
	}
	case 'X': {
		/* a pack conformance: a list of conformances */
		int l = pop_conformance_list(c);
		if (l >= 0) {
			c->nodes[l].text = "pack";
			c->nodes[l].tlen = 4;
		}
		return l;
	}
	case 'r': return attr_for(c, "protocol descriptor runtime record for ", pop_protocol(c));
	case 'c': return attr_for(c, "protocol conformance descriptor runtime record for ", pop_conformance(c));
	case 'n': return attr_for(c, "nominal type descriptor runtime record for ", pop_type(c));
	case 'o':
		return attr_for(c, "opaque type descriptor runtime record for ",
		                pop_kind(c, SW_OpaqueTypeDescriptorRef));
	case 'F': return attr(c, "accessible function runtime record for "); /* prefixes thunks too */
	default: return c->fail = 1, -1;
	}
}

static int metatype_op(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'a': return attr_for(c, "type metadata accessor for ", pop_type(c));
	case 'n': return attr_for(c, "nominal type descriptor for ", pop_type(c));
	case 'm': return attr_for(c, "metaclass for ", pop_type(c));
	case 'P': return attr_for(c, "generic type metadata pattern for ", pop_type(c));
	case 'f': return attr_for(c, "full type metadata for ", pop_type(c));
	case 'p': return attr_for(c, "protocol descriptor for ", pop_protocol(c));
	case 'r': return attr_for(c, "type metadata completion function for ", pop_type(c));
	case 'i': return attr_for(c, "type metadata instantiation function for ", pop_type(c));
	case 'I': return attr_for(c, "type metadata instantiation cache for ", pop_type(c));
	case 'l': return attr_for(c, "type metadata singleton initialization cache for ", pop_type(c));
	case 'L': return attr_for(c, "type metadata lazy cache variable for ", pop_type(c));
	case 'D': return attr_for(c, "demangling cache variable for type metadata for ", pop_type(c));
	case 'c': return attr_for(c, "protocol conformance descriptor for ", pop_conformance(c));
	case 'F': return attr_for(c, "reflection metadata field descriptor ", pop_type(c));
	case 'B': return attr_for(c, "reflection metadata builtin descriptor ", pop_type(c));
	case 'A': return attr_for(c, "reflection metadata associated type descriptor ", pop_conformance(c));
	case 'C': return attr_for(c, "reflection metadata superclass descriptor ", pop_type(c));
	case 'V': return attr_for(c, "property descriptor for ", pop_any_entity(c));
	case 'o': return attr_for(c, "class metadata base offset for ", pop_type(c));
	case 'u': return attr_for(c, "method lookup function for ", pop_type(c));
	case 'U': return attr_for(c, "ObjC metadata update function for ", pop_type(c));
	case 's': return attr_for(c, "ObjC resilient class stub for ", pop_type(c));
	case 't': return attr_for(c, "full ObjC resilient class stub for ", pop_type(c));
	case 'z':
		return attr_for(c, "flag for loading of canonical specialized generic type metadata for ", pop_type(c));
	case 'X': {
		int d = next(c);
		if (d == 'M')
			return attr_for(c, "module descriptor ", pop_context(c));
		if (d == 'E')
			return attr_for(c, "extension descriptor ", pop_context(c));
		if (d == 'X')
			return attr_for(c, "anonymous descriptor ", pop_context(c));
		return c->fail = 1, -1;
	}
	default: return c->fail = 1, -1;
	}
}

static int witness_op(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'V': return attr_for(c, "value witness table for ", pop_type(c));
	case 'v': {
		int d = next(c);
		const char *t = d == 'd' ? "direct field offset for " : d == 'i' ? "indirect field offset for " : NULL;
		if (!t)
			return c->fail = 1, -1;
		return attr_for(c, t, pop_any_entity(c));
	}
	case 'P': return attr_for(c, "protocol witness table for ", pop_conformance(c));
	case 'T': {
		/* associated type witness table accessor: conformance, associated type path, protocol */
		int proto = pop_type(c);
		const char *names[16];
		uint32_t lens[16];
		int nn = 0, first;
		size_t total = 0;
		do {
			first = pop_kind(c, SW_FirstElementMarker) >= 0;
			int id = pop_kind(c, SW_Identifier);
			if (id < 0 || nn >= 16)
				return c->fail = 1, -1;
			names[nn] = c->nodes[id].text;
			lens[nn++] = c->nodes[id].tlen;
			total += c->nodes[id].tlen + 1;
		} while (!first);
		int conf = pop_conformance(c);
		if (proto < 0 || conf < 0)
			return c->fail = 1, -1;
		char *o = arena_alloc(c, total);
		if (!o)
			return -1;
		size_t l = 0;
		for (int i = nn - 1; i >= 0; i--) {
			memcpy(o + l, names[i], lens[i]);
			l += lens[i];
			if (i)
				o[l++] = '.';
		}
		int n = sw_new_text(c, SW_AssocWitness, "T", 1);
		sw_add(c, n, conf);
		sw_add(c, n, sw_new_text(c, SW_Text, o, l));
		sw_add(c, n, proto);
		return n;
	}
	case 'J': return autodiff(c, 1);
	case 'p': return attr_for(c, "protocol witness table pattern for ", pop_conformance(c));
	case 'G': return attr_for(c, "generic protocol witness table for ", pop_conformance(c));
	case 'I':
		return attr_for(c, "instantiation function for generic protocol witness table for ",
		                pop_conformance(c));
	case 'r': return attr_for(c, "resilient protocol witness table for ", pop_conformance(c));
	case 'a': return attr_for(c, "protocol witness table accessor for ", pop_conformance(c));
	case 'l':
	case 'L': {
		int conf = pop_conformance(c);
		int type = pop_type(c);
		if (conf < 0 || type < 0)
			return c->fail = 1, -1;
		int n = mktext(c, SW_AttrFor,
		               ch == 'l' ? "lazy protocol witness table accessor for type "
		                         : "lazy protocol witness table cache variable for type ");
		sw_add(c, n, type);
		sw_add(c, n, conf);
		return n;
	}
	case 'O': {
		int d = next(c);
		const char *t = NULL;
		switch (d) {
		case 'y': t = "outlined copy of "; break;
		case 'e': t = "outlined consume of "; break;
		case 'r': t = "outlined retain of "; break;
		case 's': t = "outlined release of "; break;
		case 'b': t = "outlined init with take of "; break;
		case 'c': t = "outlined init with copy of "; break;
		case 'd': t = "outlined assign with take of "; break;
		case 'f': t = "outlined assign with copy of "; break;
		case 'h': t = "outlined destroy of "; break;
		case 'B': t = "outlined init with take of "; break;
		case 'C': t = "outlined init with copy of "; break;
		case 'D': t = "outlined assign with take of "; break;
		case 'F': t = "outlined assign with copy of "; break;
		case 'H': t = "outlined destroy of "; break;
		default: return c->fail = 1, -1;
		}
		int type = pop_type(c);
		/* an optional generic signature follows the type in the stack for the lowercase forms */
		return attr_for(c, t, type);
	}
	default: return c->fail = 1, -1;
	}
}

static int specialization(sw_ctx *c, const char *text)
{
	int n = mktext(c, SW_Specialization, text);
	/* pass id */
	if (eat(c, 'q'))
		sw_add(c, n, mktext(c, SW_SpecFlag, "serialized"));
	if (!is_digit(peek(c)))
		return c->fail = 1, -1;
	next(c);
	int tl = pop_type_list(c);
	if (tl < 0)
		return -1;
	for (int i = 0; i < c->nodes[tl].nkids; i++)
		sw_add(c, n, sw_kid(c, tl, i));
	return n;
}

/* 'Tf': function signature specialization. Argument kinds that carry data (a propagated
 * function, global or string) take identifiers pushed before 'Tf', last argument on top. */
static int fs_specialization(sw_ctx *c)
{
	int sp = mktext(c, SW_Specialization, "function signature specialization ");
	if (eat(c, 'q'))
		sw_add(c, sp, mktext(c, SW_SpecFlag, "serialized"));
	if (!eat(c, 'a'))
		eat(c, 'r');
	if (!is_digit(peek(c)))
		return c->fail = 1, -1;
	c->pos++;
	struct {
		const char *text; /* NULL: unmodified, not printed */
		int kind;         /* 0 fixed text, 1 needs an identifier: function, 2 global, 3 string */
		const char *enc;
		int64_t num;
	} a[64];
	int na = 0, ret_seen = 0, ret_empty = 0;
	int fsn[64];
	for (;;) {
		if (eat(c, '_')) {
			if (ret_seen++)
				return c->fail = 1, -1;
			/* the return value's kind: "unmodified" prints nothing; a constant function without its
			 * payload prints an empty "Return = " (as swift-demangle does) */
			if (eat(c, 'p') && eat(c, 'f'))
				ret_empty = 1;
			else if (!eat(c, 'n'))
				return c->fail = 1, -1;
			break;
		}
		if (na >= 64 || c->pos >= c->n)
			return c->fail = 1, -1;
		int ch = next(c);
		a[na].kind = 0;
		a[na].enc = NULL;
		a[na].num = -1;
		switch (ch) {
		case 'n': a[na].text = NULL; break;
		case 'c': a[na].kind = 5, a[na].text = "[Closure Propagated : "; break;
		case 'x': a[na].text = "Exploded"; break;
		case 'i': a[na].text = "Value Promoted from Box"; break;
		case 's': a[na].text = "Box to Stack"; break;
		case 'g': a[na].text = eat(c, 'X') ? "Owned To Guaranteed and Exploded" : "Owned To Guaranteed"; break;
		case 'd':
			if (eat(c, 'G'))
				a[na].text = eat(c, 'X') ? "Dead and Owned To Guaranteed and Exploded"
				                         : "Dead and Owned To Guaranteed";
			else
				a[na].text = eat(c, 'X') ? "Dead and Exploded" : "Dead";
			break;
		case 'p': {
			int k = next(c);
			if (k == 'f')
				a[na].kind = 1, a[na].text = "Function";
			else if (k == 'g')
				a[na].kind = 2, a[na].text = "Global";
			else if (k == 'k')
				a[na].kind = 6, a[na].text = "[Constant Propagated KeyPath : ";
			else if (k == 's') {
				int e = next(c);
				a[na].kind = 3, a[na].text = "String";
				a[na].enc = e == 'b' ? "u8" : e == 'w' ? "u16" : e == 'c' ? "objc" : NULL;
				if (!a[na].enc)
					return c->fail = 1, -1;
			} else if (k == 'i' || k == 'd') {
				int neg = eat(c, '-');
				if (!is_digit(peek(c)))
					return c->fail = 1, -1;
				int64_t v = 0;
				while (is_digit(peek(c)) && v < 100000000000000LL)
					v = v * 10 + (next(c) - '0');
				a[na].kind = 4;
				a[na].text = k == 'i' ? "Integer" : "Float";
				a[na].num = neg ? -v : v;
			} else
				return c->fail = 1, -1;
			break;
		}
		default: return c->fail = 1, -1; /* closures, generics, key paths: not printed here */
		}
		na++;
	}
	const char *ids[64];
	uint32_t idl[64];
	for (int i = na - 1; i >= 0; i--) {
		fsn[i] = -1;
		if (a[i].kind >= 5) {
			/* closure / key path: the argument types (on top), then the closure's or key path's name */
			int ts[16], nt = 0;
			while (top_kind(c) == SW_Type && nt < 16)
				ts[nt++] = pop(c);
			int id = pop_kind(c, SW_Identifier);
			if (id < 0 || (a[i].kind == 6 && nt != 2))
				return c->fail = 1, -1;
			char buf[96];
			int l = snprintf(buf, sizeof buf, "Arg[%d] = %s", i, a[i].text);
			char *o = arena_alloc(c, (size_t)l);
			if (!o)
				return -1;
			memcpy(o, buf, (size_t)l);
			int fs = sw_new_text(c, SW_FSSpec, o, (size_t)l);
			sw_add(c, fs, id);
			for (int t = nt - 1; t >= 0; t--) {
				if (a[i].kind == 5)
					sw_add(c, fs, mktext(c, SW_Text, t == nt - 1 ? ", Argument Types : [" : ", "));
				else
					sw_add(c, fs, mktext(c, SW_Text, t == nt - 1 ? "<" : ","));
				sw_add(c, fs, ts[t]);
			}
			/* swift-demangle closes only one bracket after a closure's types */
			sw_add(c, fs, mktext(c, SW_Text, a[i].kind == 6 ? ">]" : "]"));
			fsn[i] = fs;
			continue;
		}
		if (a[i].kind >= 1 && a[i].kind <= 3) {
			int id = pop_kind(c, SW_Identifier);
			if (id < 0)
				return c->fail = 1, -1;
			ids[i] = c->nodes[id].text;
			idl[i] = c->nodes[id].tlen;
			if (a[i].kind == 3 && idl[i] > 1 && ids[i][0] == '_')
				ids[i]++, idl[i]--; /* a string starting with a digit or '_' got one '_' more */
		}
	}
	for (int i = 0; i < na; i++) {
		if (!a[i].text)
			continue;
		if (fsn[i] >= 0) {
			sw_add(c, sp, fsn[i]);
			continue;
		}
		char buf[512];
		int l;
		if (a[i].kind == 0)
			l = snprintf(buf, sizeof buf, "Arg[%d] = %s", i, a[i].text);
		else if (a[i].kind == 4)
			l = snprintf(buf, sizeof buf, "Arg[%d] = [Constant Propagated %s : %lld]", i, a[i].text,
			             (long long)a[i].num);
		else if (a[i].kind == 3)
			l = snprintf(buf, sizeof buf, "Arg[%d] = [Constant Propagated String : %s'%.*s']", i, a[i].enc,
			             (int)idl[i], ids[i]);
		else
			l = snprintf(buf, sizeof buf, "Arg[%d] = [Constant Propagated %s : %.*s]", i, a[i].text,
			             (int)idl[i], ids[i]);
		if (l < 0 || (size_t)l >= sizeof buf)
			return c->fail = 1, -1;
		char *o = arena_alloc(c, (size_t)l);
		if (!o)
			return -1;
		memcpy(o, buf, (size_t)l);
		sw_add(c, sp, sw_new_text(c, SW_FSSpec, o, (size_t)l));
	}
	if (ret_empty)
		sw_add(c, sp, mktext(c, SW_FSSpec, "Return = "));
	return sp;
}

/* INDEX-SUBSET ('S' set, 'U' unset) up to the terminator: "{1, 2}" */
static int index_subset(sw_ctx *c, int term)
{
	char buf[256];
	size_t l = 0;
	int i = 0, any = 0;
	buf[l++] = '{';
	while (!eat(c, term)) {
		int ch = next(c);
		if ((ch != 'S' && ch != 'U') || i > 60)
			return c->fail = 1, -1;
		if (ch == 'S')
			l += (size_t)snprintf(buf + l, sizeof buf - l, "%s%d", any++ ? ", " : "", i);
		i++;
	}
	buf[l++] = '}';
	char *o = arena_alloc(c, l);
	if (!o)
		return -1;
	memcpy(o, buf, l);
	return sw_new_text(c, SW_Text, o, l);
}

/* 'TJ' / 'TJV' / 'WJ': an autodiff function or differentiability witness of the entity (and the
 * attributes pushed after it) below an optional generic signature */
static int autodiff(sw_ctx *c, int witness)
{
	int vtable = !witness && eat(c, 'V');
	int k = next(c);
	const char *t;
	if (witness)
		t = k == 'r'   ? "reverse-mode differentiability witness for "
		    : k == 'f' ? "forward-mode differentiability witness for "
		               : NULL;
	else
		t = k == 'f'   ? "forward-mode derivative of "
		    : k == 'r' ? "reverse-mode derivative of "
		    : k == 'd' ? "differential of "
		    : k == 'p' ? "pullback of "
		               : NULL;
	if (!t)
		return c->fail = 1, -1;
	int params = index_subset(c, 'p');
	int results = index_subset(c, 'r');
	int sig = pop_kind(c, SW_DependentGenericSignature);
	int n = mktext(c, SW_AutoDiff, t);
	int parts[8], np = 0;
	while (c->sp && top_kind(c) == SW_Attr && np < 7)
		parts[np++] = pop(c);
	int e = pop_any_entity(c);
	if (e < 0 || params < 0 || results < 0)
		return c->fail = 1, -1;
	parts[np++] = e;
	for (int i = 0; i < np; i++) /* the attributes as printed, then the entity */
		sw_add(c, n, parts[i]);
	sw_add(c, n, params);
	sw_add(c, n, results);
	if (sig >= 0)
		sw_add(c, n, sig);
	if (vtable)
		return attr_for(c, "vtable thunk for ", n);
	return n;
}

static const char *autodiff_kind(int k)
{
	return k == 'f'   ? "forward-mode derivative"
	       : k == 'r' ? "reverse-mode derivative"
	       : k == 'd' ? "differential"
	       : k == 'p' ? "pullback"
	                  : NULL;
}

/* 'TJO' KIND: a self-reordering reabstraction thunk between the two types below it; 'TJS' KIND
 * params 'p' results 'r' to-params 'P': a subset parameters thunk for what is on the stack (a
 * function type, or a function and its type). Built as text pieces and the printed nodes. */
static int autodiff_thunk(sw_ctx *c)
{
	int which = next(c);
	const char *kind = autodiff_kind(next(c));
	if (!kind)
		return c->fail = 1, -1;
	int n = mktext(c, SW_Thunk,
	               which == 'O' ? "autodiff self-reordering reabstraction thunk for "
	                            : "autodiff subset parameters thunk for ");
	sw_add(c, n, mktext(c, SW_Text, kind));
	if (which == 'O') {
		int to = pop_type(c), from = pop_type(c);
		if (to < 0 || from < 0)
			return c->fail = 1, -1;
		sw_add(c, n, mktext(c, SW_Text, " from "));
		sw_add(c, n, from);
		sw_add(c, n, mktext(c, SW_Text, " to "));
		sw_add(c, n, to);
		return n;
	}
	int params = index_subset(c, 'p');
	int results = index_subset(c, 'r');
	int to = index_subset(c, 'P');
	if (params < 0 || results < 0 || to < 0 || c->sp < 1 || c->sp > 2)
		return c->fail = 1, -1;
	int from[2], nf = 0;
	while (c->sp) {
		int x = pop(c);
		if (c->nodes[x].kind == SW_Entity)
			x = sw_kid(c, x, 0);
		from[nf++] = x;
	}
	sw_add(c, n, mktext(c, SW_Text, " from "));
	sw_add(c, n, from[nf - 1]);
	sw_add(c, n, mktext(c, SW_Text, " with respect to parameters "));
	sw_add(c, n, params);
	sw_add(c, n, mktext(c, SW_Text, " and results "));
	sw_add(c, n, results);
	sw_add(c, n, mktext(c, SW_Text, " to parameters "));
	sw_add(c, n, to);
	if (nf == 2) {
		sw_add(c, n, mktext(c, SW_Text, " of type "));
		sw_add(c, n, from[0]);
	}
	return n;
}

static int thunk_op(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'o': return attr(c, "@objc ");
	case 'O': return attr(c, "@nonobjc ");
	case 'D': return attr(c, "dynamic ");
	case 'd': return attr(c, "direct method reference for ");
	case 'E': return attr(c, "distributed thunk ");
	case 'F': return attr(c, "distributed accessor for ");
	case 'C': return attr_for(c, "coroutine continuation prototype for ", pop_type(c));
	case 'K':
	case 'k': {
		/* key path getter / setter: the property, the root type, its generic signature */
		int ser = eat(c, 'q');
		int sig = pop_kind(c, SW_DependentGenericSignature);
		int type = pop_type(c);
		int prop = pop(c);
		if (type < 0 || prop < 0 || (c->nodes[prop].kind != SW_Variable && c->nodes[prop].kind != SW_Subscript))
			return c->fail = 1, -1;
		int n = mktext(c, SW_Thunk, ch == 'K' ? "key path getter for " : "key path setter for ");
		sw_add(c, n, prop);
		sw_add(c, n, mktext(c, SW_Text, " : "));
		sw_add(c, n, type);
		if (sig >= 0)
			sw_add(c, n, sig);
		if (ser)
			sw_add(c, n, mktext(c, SW_Text, ", serialized"));
		return n;
	}
	case 'A': return mktext(c, SW_PartialApply, "partial apply forwarder");
	case 'a': return mktext(c, SW_PartialApply, "partial apply ObjC forwarder");
	case 'm': return attr(c, "merged ");
	case 'j': return attr(c, "dispatch thunk of ");
	case 'q': return attr(c, "method descriptor for ");
	case 'u': return attr(c, "async function pointer to ");
	case 'V': return attr(c, "vtable thunk for ");
	case 'Q':
	case 'Y': {
		int64_t i = index_(c);
		if (i < 0)
			return c->fail = 1, -1;
		int n = sw_new_index(c, SW_AsyncPartial, (uint64_t)i);
		c->nodes[n].text = ch == 'Q' ? "await" : "suspend";
		c->nodes[n].tlen = ch == 'Q' ? 5 : 7;
		return n;
	}
	case 'v': {
		int64_t i = index_(c);
		if (i < 0)
			return c->fail = 1, -1;
		int ro = eat(c, 'r');
		int n = sw_new_index(c, SW_OutlinedVariable, (uint64_t)i);
		c->nodes[n].text = ro ? "read-only object" : "variable";
		c->nodes[n].tlen = (uint32_t)strlen(c->nodes[n].text);
		return n;
	}
	case 'e': {
		size_t st = c->pos;
		while (c->pos < c->n && c->s[c->pos] != '_')
			c->pos++;
		if (!eat(c, '_'))
			return c->fail = 1, -1;
		return sw_new_text(c, SW_OutlinedBridged, c->s + st, c->pos - 1 - st);
	}
	case 'w': {
		int d = next(c);
		switch (d) {
		case 'b': return attr(c, "back deployment thunk for ");
		case 'B': return attr(c, "back deployment fallback for ");
		case 'S': return attr(c, "#_hasSymbol query for ");
		case 'c': return attr(c, "coro function pointer to ");
		case 'd': return attr(c, "default override of ");
		default: return c->fail = 1, -1;
		}
	}
	case 'W': {
		int e = pop_any_entity(c);
		int conf = pop_conformance(c);
		if (e < 0 || conf < 0)
			return c->fail = 1, -1;
		return mk2(c, SW_ProtocolWitness, conf, e);
	}
	case 'R':
	case 'r': {
		int sig = pop_kind(c, SW_DependentGenericSignature);
		int to = pop_type(c);
		int from = pop_type(c);
		if (to < 0 || from < 0)
			return c->fail = 1, -1;
		int n = mktext(c, SW_ReabstractionThunk,
		               ch == 'R' ? "reabstraction thunk helper " : "reabstraction thunk ");
		if (sig >= 0)
			sw_add(c, n, sig);
		sw_add(c, n, from);
		sw_add(c, n, to);
		return n;
	}
	case 'f': return fs_specialization(c);
	case 'J':
		if (peek(c) == 'O' || peek(c) == 'S')
			return autodiff_thunk(c);
		return autodiff(c, 0);
	case 'S': return attr(c, "protocol self-conformance witness for ");
	case 'L': return attr_for(c, "protocol requirements base descriptor for ", pop_protocol(c));
	case 'l': {
		int proto = pop_protocol(c);
		int name = pop_kind(c, SW_Identifier);
		if (name < 0 || proto < 0)
			return c->fail = 1, -1;
		int m = mk2(c, SW_DependentMemberType, proto, dep_assoc_ref(c, name, -1));
		return attr_for(c, "associated type descriptor for ", m);
	}
	case 'n':
	case 'N': {
		/* protocol assoc-type-list protocol */
		int q = pop_protocol(c);
		int refs[32], nr = 0, first;
		do {
			first = pop_kind(c, SW_FirstElementMarker) >= 0;
			int r = pop_assoc_name(c);
			if (r < 0 || nr >= 32)
				return c->fail = 1, -1;
			refs[nr++] = r;
		} while (!first);
		int t = pop_protocol(c);
		if (q < 0 || t < 0)
			return c->fail = 1, -1;
		for (int i = nr - 1; i >= 0; i--)
			t = mk_type(c, mk2(c, SW_DependentMemberType, t, refs[i]));
		return attr_for(c,
		                ch == 'n' ? "associated conformance descriptor for "
		                          : "default associated conformance accessor for ",
		                mk2(c, SW_ConformanceReq, t, q));
	}
	case 't': {
		/* dropped arguments ('t' NATURAL?)* before a generic specialization: not printed */
		do {
			while (is_digit(peek(c)))
				c->pos++;
		} while (eat(c, 't'));
		int k = next(c);
		if (k == 'g' || k == 'B')
			return specialization(c, "generic specialization ");
		if (k == 'G')
			return specialization(c, "generic not re-abstracted specialization ");
		return c->fail = 1, -1;
	}
	case 'g': return specialization(c, "generic specialization ");
	case 'G': return specialization(c, "generic not re-abstracted specialization ");
	case 'B': return specialization(c, "generic specialization ");
	case 'i': return specialization(c, "inlined generic function ");
	case 'p': return specialization(c, "generic pre-specialization ");
	default: return c->fail = 1, -1;
	}
}

static int special_type(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'X': {
		/* a SIL box with its layout: field types (inout ones are "var"), then optionally a generic
		 * signature and its arguments */
		int sig = pop_kind(c, SW_DependentGenericSignature);
		int args = sig >= 0 ? pop_type_list(c) : -1;
		int fields = pop_type_list(c);
		if (fields < 0 || (sig >= 0 && args < 0))
			return c->fail = 1, -1;
		int box = sw_new(c, SW_SILBoxType);
		sw_add(c, box, fields);
		if (sig >= 0) {
			sw_add(c, box, sig);
			sw_add(c, box, args);
		}
		return mk_type(c, box);
	}
	case 'Z': {
		/* an anonymous context: its context, a name (e.g. an address), generic arguments */
		int tl = pop_kind(c, SW_EmptyList) >= 0 ? sw_new(c, SW_TypeList) : pop_kind(c, SW_TypeList);
		int name = pop_kind(c, SW_Identifier);
		int ctx = pop_context(c);
		if (tl < 0 || name < 0 || ctx < 0)
			return c->fail = 1, -1;
		int n = sw_new(c, SW_AnonymousContext);
		sw_add(c, n, name);
		sw_add(c, n, ctx);
		sw_add(c, n, tl);
		return n;
	}
	case 'P': {
		/* a constrained existential: the existential, then its requirements (on Self) */
		int reqs = sw_new(c, SW_TypeList), first, nr = 0;
		do {
			first = pop_kind(c, SW_FirstElementMarker) >= 0;
			int k = top_kind(c);
			if ((k != SW_ConformanceReq && k != SW_SameTypeReq) || ++nr > 64)
				return c->fail = 1, -1;
			sw_add(c, reqs, pop(c));
		} while (!first);
		reverse_kids(c, reqs, 0);
		return mk_type(c, mk2(c, SW_ConstrainedExistential, pop_type(c), reqs));
	}
	case 'w': return mk_type(c, mk1(c, SW_Weak, pop_type(c)));
	case 'o': return mk_type(c, mk1(c, SW_Unowned, pop_type(c)));
	case 'u': return mk_type(c, mk1(c, SW_Unmanaged, pop_type(c)));
	case 'D': return mk_type(c, mk1(c, SW_DynamicSelf, pop_type(c)));
	case 'b': return pop_function_type(c, SW_ObjCBlock);
	case 'B': return pop_function_type(c, SW_ObjCBlock);
	case 'C': return pop_function_type(c, SW_CFunctionPointer);
	case 'z': {
		/* a C function pointer or block carrying its Clang type (a raw Itanium mangling) */
		int k = next(c);
		if (k != 'C' && k != 'B')
			return c->fail = 1, -1;
		int64_t len = natural(c);
		if (len <= 0 || (size_t)len > c->n - c->pos)
			return c->fail = 1, -1;
		push(c, sw_new_text(c, SW_ClangType, c->s + c->pos, (size_t)len));
		c->pos += (size_t)len;
		return pop_function_type(c, k == 'C' ? SW_CFunctionPointer : SW_ObjCBlock);
	}
	case 'S': {
		/* sugared types (debug info) */
		int k = next(c);
		if (k == 'q' || k == 'a') {
			int t = pop_type(c);
			if (t < 0)
				return c->fail = 1, -1;
			int tl = mk1(c, SW_TypeList, t);
			int nom = k == 'q' ? mk2(c, SW_Enum, swift_module(c), mktext(c, SW_Identifier, "Optional"))
			                   : mk2(c, SW_Structure, swift_module(c), mktext(c, SW_Identifier, "Array"));
			return mk_type(
			    c, mk2(c, k == 'q' ? SW_BoundGenericEnum : SW_BoundGenericStructure, mk_type(c, nom), tl));
		}
		if (k == 'D') {
			int v = pop_type(c), key = pop_type(c);
			if (v < 0 || key < 0)
				return c->fail = 1, -1;
			int nom = mk2(c, SW_Structure, swift_module(c), mktext(c, SW_Identifier, "Dictionary"));
			return mk_type(c,
			               mk2(c, SW_BoundGenericStructure, mk_type(c, nom), mk2(c, SW_TypeList, key, v)));
		}
		if (k == 'A') {
			int elem = pop_type(c), count = pop_type(c);
			if (elem < 0 || count < 0)
				return c->fail = 1, -1;
			return mk_type(c, mk2(c, SW_SugaredInlineArray, count, elem));
		}
		return c->fail = 1, -1;
	}
	case 'f': return pop_function_type(c, SW_ThinFunctionType);
	case 'E': return pop_function_type(c, SW_NoEscapeFunctionType);
	case 'K': return pop_function_type(c, SW_AutoClosureType);
	case 'A': return pop_function_type(c, SW_EscapingAutoClosureType);
	case 'M': {
		int t = pop_type(c);
		int kind = next(c);
		const char *s = kind == 't'   ? "@thin "
		                : kind == 'T' ? "@thick "
		                : kind == 'o' ? "@objc_metatype "
		                              : NULL;
		if (!s || t < 0)
			return c->fail = 1, -1;
		int n = mktext(c, SW_Metatype, s);
		sw_add(c, n, t);
		return mk_type(c, n);
	}
	case 'm': {
		int t = pop_type(c);
		return mk_type(c, mk1(c, SW_ExistentialMetatype, t));
	}
	case 'c': {
		/* protocol list with a superclass */
		int cls = pop_type(c);
		int pl = pop_protocol_list(c);
		return mk_type(c, mk2(c, SW_ProtocolListWithClass, mk1(c, SW_ProtocolList, pl), cls));
	}
	case 'l': {
		int pl = pop_protocol_list(c);
		return mk_type(c, mk1(c, SW_ProtocolListWithAnyObject, mk1(c, SW_ProtocolList, pl)));
	}
	default: return c->fail = 1, -1;
	}
}

static const char *impl_param_conv(int ch)
{
	switch (ch) {
	case 'i': return "@in";
	case 'c': return "@in_constant";
	case 'l': return "@inout";
	case 'b': return "@inout_aliasable";
	case 'n': return "@in_guaranteed";
	case 'X': return "@in_cxx";
	case 'x': return "@owned";
	case 'y': return "@unowned";
	case 'g': return "@guaranteed";
	case 'e': return "@deallocating";
	case 'v': return "@pack_owned";
	case 'p': return "@pack_guaranteed";
	case 'm': return "@pack_inout";
	}
	return NULL;
}

static const char *impl_result_conv(int ch)
{
	switch (ch) {
	case 'r': return "@out";
	case 'o': return "@owned";
	case 'd': return "@unowned";
	case 'u': return "@unowned_inner_pointer";
	case 'a': return "@autoreleased";
	case 'k': return "@pack_out";
	case 'l': return "@guaranteed_address";
	case 'g': return "@guaranteed";
	case 'm': return "@inout";
	}
	return NULL;
}

/* An SIL function type ("I" FUNC-ATTRIBUTES "_"): attributes, then one convention per parameter,
 * result, yield ('Y') and error ('z'); the types were pushed before, in that order. */
static int impl_function_type(sw_ctx *c)
{
	int f = sw_new(c, SW_ImplFunctionType);
	/* "@substituted" types: the pattern's substitutions (types up to 'y' or '_', under them the
	 * pattern's signature) and the invocation's; retroactive conformances are not printed */
	int subs[2] = {-1, -1};
	for (int w = 0; w < 2; w++) {
		if (!eat(c, w ? 'I' : 's'))
			continue;
		while (top_kind(c) == SW_RetroactiveConformance)
			pop(c);
		int tl = sw_new_text(c, SW_TypeList, w ? "i" : "p", 1), ts[64], nt = 0;
		for (;;) {
			while (top_kind(c) == SW_Type && nt < 64)
				ts[nt++] = pop(c);
			if (pop_kind(c, SW_EmptyList) >= 0)
				break;
			if (pop_kind(c, SW_FirstElementMarker) < 0)
				return c->fail = 1, -1;
		}
		if (!w) {
			int psig = pop_kind(c, SW_DependentGenericSignature);
			if (psig < 0)
				return c->fail = 1, -1;
			sw_add(c, tl, psig);
		}
		for (int i = nt - 1; i >= 0; i--)
			sw_add(c, tl, ts[i]);
		subs[w] = tl;
	}
	int sig = pop_kind(c, SW_DependentGenericSignature);
	int attrs[16], na = 0;
#define ATTR(t) (na < 16 ? (attrs[na++] = mktext(c, SW_ImplAttr, t)) : (c->fail = 1))
	if (eat(c, 'P') && sig < 0)
		ATTR("@pseudogeneric");
	if (eat(c, 'e'))
		ATTR("@escaping");
	if (eat(c, 'A'))
		ATTR("@isolated(any)");
	else if (eat(c, 'N'))
		ATTR("nonisolated(nonsending)");
	switch (peek(c)) {
	case 'd': c->pos++, ATTR("@differentiable"); break;
	case 'l': c->pos++, ATTR("@differentiable(_linear)"); break;
	case 'f': c->pos++, ATTR("@differentiable(_forward)"); break;
	case 'r': c->pos++, ATTR("@differentiable(reverse)"); break;
	}
	switch (next(c)) {
	case 'y': ATTR("@callee_unowned"); break;
	case 'g': ATTR("@callee_guaranteed"); break;
	case 'x': ATTR("@callee_owned"); break;
	case 't': ATTR("@convention(thin)"); break;
	default: return c->fail = 1, -1;
	}
	switch (peek(c)) {
	case 'B': c->pos++, ATTR("@convention(block)"); break;
	case 'C': c->pos++, ATTR("@convention(c)"); break;
	case 'M': c->pos++, ATTR("@convention(method)"); break;
	case 'J': c->pos++, ATTR("@convention(objc_method)"); break;
	case 'K': c->pos++, ATTR("@convention(closure)"); break;
	case 'W': c->pos++, ATTR("@convention(witness_method)"); break;
	case 'z': return c->fail = 1, -1; /* C type attached */
	}
	switch (peek(c)) {
	case 'A': c->pos++, ATTR("@yield_once"); break;
	case 'I': c->pos++, ATTR("@yield_once_2"); break;
	case 'G': c->pos++, ATTR("@yield_many"); break;
	}
	if (eat(c, 'h'))
		ATTR("@Sendable");
	if (eat(c, 'H'))
		ATTR("@async");
	int sending_result = eat(c, 'T');
#undef ATTR
	/* conventions: kind 0 param, 1 result, 2 yield, 3 error */
	struct impl_conv {
		const char *conv;
		uint8_t kind, noderiv, sending, isolated;
	} cv[64];
	int ncv = 0;
	const char *k;
	while ((k = impl_param_conv(peek(c)))) {
		if (ncv >= 64)
			return c->fail = 1, -1;
		c->pos++;
		cv[ncv].conv = k;
		cv[ncv].kind = 0;
		cv[ncv].noderiv = eat(c, 'w');
		cv[ncv].sending = eat(c, 'T');
		cv[ncv].isolated = eat(c, 'I');
		eat(c, 'L');
		ncv++;
	}
	while ((k = impl_result_conv(peek(c)))) {
		if (ncv >= 64)
			return c->fail = 1, -1;
		c->pos++;
		cv[ncv] = (struct impl_conv){k, 1, (uint8_t)eat(c, 'w'), 0, 0};
		ncv++;
	}
	while (eat(c, 'Y')) {
		if (ncv >= 64 || !(k = impl_param_conv(next(c))))
			return c->fail = 1, -1;
		cv[ncv++] = (struct impl_conv){k, 2, 0, 0, 0};
	}
	if (eat(c, 'z')) {
		if (ncv >= 64 || !(k = impl_result_conv(next(c))))
			return c->fail = 1, -1;
		cv[ncv++] = (struct impl_conv){k, 3, (uint8_t)eat(c, 'w'), 0, 0};
	}
	if (!eat(c, '_'))
		return c->fail = 1, -1;
	int types[64];
	for (int i = ncv - 1; i >= 0; i--) {
		types[i] = pop_type(c);
		if (types[i] < 0)
			return c->fail = 1, -1;
	}
	for (int i = 0; i < na; i++)
		sw_add(c, f, attrs[i]);
	if (sig >= 0)
		sw_add(c, f, sig);
	if (sending_result)
		sw_add(c, f, sw_new(c, SW_SendingResultFunctionType));
	for (int w = 0; w < 2; w++)
		if (subs[w] >= 0)
			sw_add(c, f, subs[w]);
	static const int kinds[] = {SW_ImplParameter, SW_ImplResult, SW_ImplYield, SW_ImplErrorResult};
	for (int i = 0; i < ncv; i++) {
		int n = sw_new_text(c, kinds[cv[i].kind], cv[i].conv, strlen(cv[i].conv));
		c->nodes[n].index = (uint64_t)(cv[i].noderiv | cv[i].sending << 1 | cv[i].isolated << 2);
		sw_add(c, n, types[i]);
		sw_add(c, f, n);
	}
	return mk_type(c, f);
}

/* ---------------------------------------------------------------- top level */

static int is_attr_kind(int k)
{
	return k == SW_Attr || k == SW_Specialization || k == SW_PartialApply || k == SW_AsyncPartial ||
	       k == SW_OutlinedVariable || k == SW_OutlinedBridged;
}

int sw_parse_new(sw_ctx *c)
{
	int steps = 0;
	while (c->pos < c->n && !c->fail) {
		if (++steps > 4096)
			return -1;
		int n = op(c);
		if (c->fail || n < 0)
			return -1;
		push(c, n);
	}
	if (c->fail || c->sp == 0)
		return -1;
	int g = sw_new(c, SW_Global);
	int suffix = -1;
	if (top_kind(c) == SW_Suffix)
		suffix = pop(c);
	while (c->sp && is_attr_kind(top_kind(c)))
		sw_add(c, g, pop(c));
	int start = c->nodes[g].nkids;
	(void)start;
	for (int i = 0; i < c->sp; i++) {
		int n = c->stack[i];
		int k = c->nodes[n].kind;
		if (k == SW_Entity)
			n = sw_kid(c, n, 0);
		else if (k == SW_Type)
			; /* a bare type: print it */
		else if (k == SW_Identifier && c->nodes[g].nkids > 0)
			; /* a specialization of a symbol given by name */
		else if (!is_context_kind(k) && k != SW_AttrFor && k != SW_ProtocolWitness &&
		         k != SW_ReabstractionThunk && k != SW_AutoDiff && k != SW_Thunk &&
		         k != SW_ConcreteProtocolConformance && k != SW_AssocWitness)
			return -1;
		sw_add(c, g, n);
	}
	/* one entity at most (after the attributes) */
	if (c->sp > 1 || c->nodes[g].nkids == 0)
		return -1;
	if (suffix >= 0)
		sw_add(c, g, suffix);
	return c->fail ? -1 : g;
}

/* ---------------------------------------------------------------- entry point */

#include "tracekit/symbol.h"

static size_t swift_prefix(const char *s, size_t n, int *old_fn)
{
	*old_fn = 0;
	if (n >= 2 && s[0] == '_' && s[1] == '$')
		return 2 + (n > 2 && (s[2] == 's' || s[2] == 'S' || s[2] == 'e') ? 1 : 100);
	if (n >= 2 && s[0] == '$' && (s[1] == 's' || s[1] == 'S' || s[1] == 'e'))
		return 2;
	if (n >= 3 && s[0] == '_' && s[1] == 'T' && s[2] == '0') {
		*old_fn = 1;
		return 3;
	}
	if (n >= 14 && memcmp(s, "@__swiftmacro_", 14) == 0)
		return 14;
	return 0;
}

size_t tk_swift_demangle(const char *in, size_t len, char *out, size_t cap, int flags)
{
	if (!in || !out || cap == 0 || memchr(in, 0, len))
		return 0; /* a NUL is no part of a symbol, and names are printed as C strings */
	int old_fn;
	size_t pre = swift_prefix(in, len, &old_fn);
	/* one context per thread, reused: demangling allocates nothing per name */
	static _Thread_local sw_ctx *tls;
	if (!tls && !(tls = malloc(sizeof *tls)))
		return 0;
	sw_ctx *c = tls;
	c->s = in;
	c->n = len;
	c->fail = 0;
	c->depth = 0;
	c->nnodes = c->nkidpool = 0;
	sw_new(c, SW_Text); /* node 0: the scratch node (see sw_new) */
	c->narena = 0;
	c->sp = c->nsubst = c->nwords = 0;
	c->old_fn = old_fn;
	int g = -1;
	if (pre && pre <= len) {
		c->pos = pre;
		g = sw_parse_new(c);
	} else if (len >= 2 && in[0] == '_' && in[1] == 'T') {
		c->pos = 2;
		g = sw_parse_old(c);
	}
	int r = -1;
	if (g >= 0 && !c->fail)
		r = sw_print(c, g, flags & TK_DEMANGLE_SIMPLIFIED, out, cap);
	return r < 0 ? 0 : (size_t)r;
}
