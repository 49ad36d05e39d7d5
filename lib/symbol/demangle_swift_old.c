/*
 * Swift demangler, legacy mangling ("_T…" from Swift 1 to 3: "_TF…" functions, "_Tt…" types,
 * "_TM…" metadata…), as far as the Swift project's own test vectors go. Unlike the current
 * mangling this one is prefix-ordered, so it is a recursive descent; it builds the same nodes
 * as the current parser, and the same printer prints both. Recursion depth, node and
 * substitution counts are bounded (swift_node.h).
 */
#include <stdio.h>
#include <string.h>

#include "symbol/swift_node.h"

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
	if (c->pos < c->n && (unsigned char)c->s[c->pos] == ch) {
		c->pos++;
		return 1;
	}
	return 0;
}
static int is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}
static int bad(sw_ctx *c)
{
	c->fail = 1;
	return -1;
}

static int mk1(sw_ctx *c, int kind, int a)
{
	if (a < 0)
		return bad(c);
	int n = sw_new(c, kind);
	sw_add(c, n, a);
	return n;
}
static int mk2(sw_ctx *c, int kind, int a, int b)
{
	if (a < 0 || b < 0)
		return bad(c);
	int n = sw_new(c, kind);
	sw_add(c, n, a);
	sw_add(c, n, b);
	return n;
}
static int mktext(sw_ctx *c, int kind, const char *s)
{
	return sw_new_text(c, kind, s, strlen(s));
}
static int ty(sw_ctx *c, int in)
{
	return mk1(c, SW_Type, in);
}

static int64_t natural(sw_ctx *c)
{
	if (!is_digit(peek(c)))
		return -1;
	int64_t v = 0;
	while (is_digit(peek(c))) {
		v = v * 10 + (next(c) - '0');
		if (v > 100000000)
			return bad(c);
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
		return bad(c);
	return v + 1;
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

static int identifier_kind(sw_ctx *c, int kind)
{
	int puny = eat(c, 'X');
	int op = 0;
	if (eat(c, 'o')) {
		int f = next(c);
		op = f == 'p' ? SW_PrefixOperator : f == 'P' ? SW_PostfixOperator : f == 'i' ? SW_InfixOperator : -1;
		if (op < 0)
			return bad(c);
		kind = op;
	}
	int64_t len = natural(c);
	if (len <= 0 || (size_t)len > c->n - c->pos)
		return bad(c);
	const char *p = c->s + c->pos;
	c->pos += (size_t)len;
	const char *t = p;
	size_t tl = (size_t)len;
	if (puny) {
		if (sw_punycode(c, p, (size_t)len, &t, &tl) < 0)
			return bad(c);
	}
	if (op) {
		static const char letters[] = "acdeglmnoprstxzq";
		static const char chars[] = "&@/=><*!|+%-~^.?";
		if (c->narena + tl > SW_ARENA)
			return bad(c);
		char *o = c->arena + c->narena;
		c->narena += tl;
		for (size_t i = 0; i < tl; i++) {
			int ch = (unsigned char)t[i];
			const char *q = ch >= 'a' && ch <= 'z' ? strchr(letters, ch) : NULL;
			if (q)
				o[i] = chars[q - letters];
			else if (ch < 0x80 && !puny)
				return bad(c);
			else
				o[i] = (char)ch;
		}
		t = o;
	}
	return sw_new_text(c, kind, t, tl);
}

static int identifier(sw_ctx *c)
{
	return identifier_kind(c, SW_Identifier);
}

static int type(sw_ctx *c);
static int context(sw_ctx *c);
static int entity(sw_ctx *c);

static int enter(sw_ctx *c)
{
	if (++c->depth > SW_MAX_DEPTH)
		return bad(c);
	return 0;
}

static int swift_mod(sw_ctx *c)
{
	return mktext(c, SW_Module, "Swift");
}

static int known_type(sw_ctx *c, int ch)
{
	const char *name = NULL;
	int kind = SW_Structure;
	switch (ch) {
	case 'a': name = "Array"; break;
	case 'b': name = "Bool"; break;
	case 'c': name = "UnicodeScalar"; break;
	case 'd': name = "Double"; break;
	case 'f': name = "Float"; break;
	case 'i': name = "Int"; break;
	case 'V': name = "UnsafeRawPointer"; break;
	case 'v': name = "UnsafeMutableRawPointer"; break;
	case 'P': name = "UnsafePointer"; break;
	case 'p': name = "UnsafeMutablePointer"; break;
	case 'q': name = "Optional", kind = SW_Enum; break;
	case 'Q': name = "ImplicitlyUnwrappedOptional", kind = SW_Enum; break;
	case 'R': name = "UnsafeBufferPointer"; break;
	case 'r': name = "UnsafeMutableBufferPointer"; break;
	case 'S': name = "String"; break;
	case 'u': name = "UInt"; break;
	default: return bad(c);
	}
	return ty(c, mk2(c, kind, swift_mod(c), mktext(c, SW_Identifier, name)));
}

/* 'S' substitution: S_ S0_ …, Ss (Swift), So (__C), SC (__C_Synthesized), S + known type */
static int substitution(sw_ctx *c)
{
	int ch = peek(c);
	if (ch == '_' || is_digit(ch)) {
		int64_t i = index_(c);
		if (i < 0 || i >= c->nsubst)
			return bad(c);
		return c->subst[i];
	}
	c->pos++;
	if (ch == 's')
		return swift_mod(c);
	if (ch == 'o')
		return mktext(c, SW_Module, "__C");
	if (ch == 'C')
		return mktext(c, SW_Module, "__C_Synthesized");
	return known_type(c, ch);
}

static int module(sw_ctx *c)
{
	if (eat(c, 's'))
		return swift_mod(c);
	if (eat(c, 'S')) {
		int m = substitution(c);
		if (m >= 0 && c->nodes[m].kind != SW_Module)
			return bad(c);
		return m;
	}
	int m = identifier_kind(c, SW_Module);
	add_subst(c, m);
	return m;
}

static int decl_name(sw_ctx *c)
{
	if (eat(c, 'L')) {
		int64_t i = index_(c);
		if (i < 0)
			return -1;
		int id = identifier(c);
		return mk2(c, SW_LocalDeclName, sw_new_index(c, SW_Number, (uint64_t)i), id);
	}
	if (eat(c, 'P')) {
		int d = identifier(c);
		int id = identifier(c);
		return mk2(c, SW_PrivateDeclName, d, id);
	}
	return identifier(c);
}

static int nominal(sw_ctx *c, int kind)
{
	int ctx = context(c);
	int name = decl_name(c);
	int t = ty(c, mk2(c, kind, ctx, name));
	add_subst(c, t);
	return t;
}

static int protocol_name(sw_ctx *c)
{
	/* a protocol in a list: a substitution or context + name */
	int ctx;
	if (eat(c, 'S')) {
		int s = substitution(c);
		if (s < 0)
			return -1;
		int in = c->nodes[s].kind == SW_Type ? sw_kid(c, s, 0) : -1;
		if (in >= 0 && c->nodes[in].kind == SW_Protocol)
			return s;
		if (c->nodes[s].kind != SW_Module && (in < 0 || c->nodes[in].kind == SW_Protocol))
			return bad(c);
		ctx = in >= 0 ? in : s;
	} else
		ctx = context(c);
	int name = decl_name(c);
	int t = ty(c, mk2(c, SW_Protocol, ctx, name));
	add_subst(c, t);
	return t;
}

static int protocol_list(sw_ctx *c)
{
	int tl = sw_new(c, SW_TypeList);
	while (!eat(c, '_')) {
		if (c->fail || c->pos >= c->n)
			return bad(c);
		sw_add(c, tl, protocol_name(c));
	}
	return mk1(c, SW_ProtocolList, tl);
}

static int generic_signature(sw_ctx *c, int is_pseudo);
static int impl_function(sw_ctx *c);
static int conformance(sw_ctx *c);
static int global(sw_ctx *c, int g);

static int function_type(sw_ctx *c, int kind)
{
	int f = sw_new(c, kind);
	if (eat(c, 'z'))
		sw_add(c, f, sw_new(c, SW_ThrowsAnnotation));
	int a = type(c);
	int r = type(c);
	sw_add(c, f, mk1(c, SW_ArgumentTuple, a));
	sw_add(c, f, mk1(c, SW_ReturnType, r));
	return ty(c, f);
}

static int tuple(sw_ctx *c, int variadic)
{
	int t = sw_new(c, SW_Tuple);
	while (!eat(c, '_')) {
		if (c->fail || c->pos >= c->n)
			return bad(c);
		int el = sw_new(c, SW_TupleElement);
		if (is_digit(peek(c)) || peek(c) == 'X') {
			int id = identifier(c);
			if (id < 0)
				return -1;
			sw_add(c, el, sw_new_text(c, SW_TupleElementName, c->nodes[id].text, c->nodes[id].tlen));
		}
		sw_add(c, el, type(c));
		sw_add(c, t, el);
	}
	if (variadic && c->nodes[t].nkids) {
		int last = sw_kid(c, t, c->nodes[t].nkids - 1);
		if (last < 0 || c->fail)
			return bad(c);
		/* the variadic element is printed as its element type + "..." */
		int lt = sw_kid(c, last, c->nodes[last].nkids - 1);
		int in = sw_kid(c, lt, 0);
		int el = sw_new(c, SW_TupleElement);
		for (int i = 0; i + 1 < c->nodes[last].nkids; i++)
			sw_add(c, el, sw_kid(c, last, i));
		sw_add(c, el, sw_new(c, SW_VariadicMarker));
		if (in >= 0 && c->nodes[in].kind == SW_BoundGenericStructure)
			sw_add(c, el, sw_kid(c, sw_kid(c, in, 1), 0));
		else
			sw_add(c, el, lt);
		c->kidpool[c->nodes[t].kids + c->nodes[t].nkids - 1] = (uint32_t)el;
	}
	return ty(c, t);
}

static int gen_param(sw_ctx *c, uint64_t depth, uint64_t index)
{
	int n = sw_new_index(c, SW_DependentGenericParamType, (depth << 32) | index);
	return ty(c, n);
}

/* 'q' INDEX | 'qd' INDEX INDEX | 'x' */
static int generic_param_ref(sw_ctx *c)
{
	if (eat(c, 'd')) {
		int64_t d = index_(c);
		int64_t i = index_(c);
		if (d < 0 || i < 0)
			return -1;
		return gen_param(c, (uint64_t)d + 1, (uint64_t)i);
	}
	int64_t i = index_(c);
	if (i < 0)
		return -1;
	return gen_param(c, 0, (uint64_t)i + 1);
}

static int assoc_ref(sw_ctx *c)
{
	/* identifier, or 'P' protocol identifier, or 'S' substitution of an earlier ref */
	if (eat(c, 'S')) {
		int s = substitution(c);
		if (s < 0 || c->nodes[s].kind != SW_DependentAssociatedTypeRef)
			return bad(c);
		return s;
	}
	int proto = -1;
	if (eat(c, 'P'))
		proto = protocol_name(c);
	int id = identifier(c);
	if (id < 0)
		return -1;
	int r = sw_new(c, SW_DependentAssociatedTypeRef);
	sw_add(c, r, id);
	if (proto >= 0)
		sw_add(c, r, proto);
	add_subst(c, r);
	return r;
}

static int dependent_type(sw_ctx *c)
{
	/* generic param, or 'w' param assoc, or 'W' param assoc+ '_' */
	int ch = next(c);
	if (ch == 'x')
		return gen_param(c, 0, 0);
	if (ch == 'q')
		return generic_param_ref(c);
	if (ch == 'd' || ch == '_' || is_digit(ch)) {
		/* a generic parameter by index: '_' is the first, 'd' DEPTH INDEX a deeper one */
		c->pos--;
		if (eat(c, 'd')) {
			int64_t d = index_(c), i = index_(c);
			if (d < 0 || i < 0)
				return -1;
			return gen_param(c, (uint64_t)d + 1, (uint64_t)i);
		}
		int64_t i = index_(c);
		if (i < 0)
			return -1;
		return gen_param(c, 0, (uint64_t)i + 1);
	}
	if (ch == 'w') {
		int base = dependent_type(c);
		int r = assoc_ref(c);
		return ty(c, mk2(c, SW_DependentMemberType, base, r));
	}
	if (ch == 'W') {
		int base = dependent_type(c);
		int t = base;
		int n = 0;
		while (!eat(c, '_')) {
			if (c->fail || c->pos >= c->n)
				return bad(c);
			t = ty(c, mk2(c, SW_DependentMemberType, t, assoc_ref(c)));
			n++;
		}
		return n ? t : bad(c);
	}
	return bad(c);
}

static int generic_signature(sw_ctx *c, int is_pseudo)
{
	(void)is_pseudo;
	int sig = sw_new(c, SW_DependentGenericSignature);
	int counts = 0;
	while (peek(c) != 'R' && peek(c) != 'r') {
		int64_t n;
		if (eat(c, 'z'))
			n = 0;
		else if (eat(c, '_'))
			n = 1;
		else {
			/* a count, however large, only names parameters (the printer shows 128 at most):
			 * saturate instead of refusing */
			if (!is_digit(peek(c)))
				return bad(c);
			n = 0;
			while (is_digit(peek(c))) {
				n = n * 10 + (next(c) - '0');
				if (n > (1LL << 32))
					n = 1LL << 32;
			}
			if (!eat(c, '_'))
				return bad(c);
			n += 2;
		}
		sw_add(c, sig, sw_new_index(c, SW_GenericParamCount, (uint64_t)n));
		counts++;
		if (counts > 64)
			return bad(c);
	}
	if (!counts)
		sw_add(c, sig, sw_new_index(c, SW_GenericParamCount, 1));
	if (eat(c, 'R')) {
		while (!eat(c, 'r')) {
			if (c->fail || c->pos >= c->n)
				return bad(c);
			int subj = dependent_type(c);
			if (subj < 0)
				return -1;
			int ch = peek(c);
			if (ch == 'z') {
				c->pos++;
				sw_add(c, sig, mk2(c, SW_SameTypeReq, subj, type(c)));
			} else if (ch == 'l') {
				c->pos++;
				int lc = next(c);
				const char *nm = NULL;
				int nargs = 0;
				switch (lc) {
				case 'U': nm = "_UnknownLayout"; break;
				case 'R': nm = "_RefCountedObject"; break;
				case 'N': nm = "_NativeRefCountedObject"; break;
				case 'C': nm = "AnyObject"; break;
				case 'D': nm = "_NativeClass"; break;
				case 'T': nm = "_Trivial"; break;
				case 'E': nm = "_Trivial", nargs = 2; break;
				case 'e': nm = "_Trivial", nargs = 1; break;
				case 'M': nm = "_TrivialAtMost", nargs = 2; break;
				case 'm': nm = "_TrivialAtMost", nargs = 1; break;
				default: return bad(c);
				}
				int r = mk2(c, SW_LayoutReq, subj, mktext(c, SW_LayoutConstraint, nm));
				for (int i = 0; i < nargs; i++) {
					int64_t v = natural(c);
					if (v < 0)
						return bad(c);
					if (nargs == 2 && i == 0 && !eat(c, '_'))
						return bad(c);
					sw_add(c, r, sw_new_index(c, SW_Number, (uint64_t)v));
				}
				sw_add(c, sig, r);
			} else if (ch == 'C') {
				c->pos++;
				sw_add(c, sig, mk2(c, SW_ConformanceReq, subj, nominal(c, SW_Class)));
			} else if (ch == 'S' && c->pos + 1 < c->n &&
			           (c->s[c->pos + 1] == '_' || is_digit(c->s[c->pos + 1]))) {
				/* a substituted protocol or class; a substituted module is the context of a protocol */
				size_t at = c->pos;
				c->pos++;
				int t = substitution(c);
				if (t < 0)
					return bad(c);
				if (c->nodes[t].kind != SW_Type) {
					c->pos = at;
					t = protocol_name(c);
				}
				sw_add(c, sig, mk2(c, SW_ConformanceReq, subj, t));
			} else {
				sw_add(c, sig, mk2(c, SW_ConformanceReq, subj, protocol_name(c)));
			}
		}
	} else if (!eat(c, 'r'))
		return bad(c);
	return sig;
}

static int builtin(sw_ctx *c)
{
	int ch = next(c);
	char buf[64];
	const char *nm = NULL;
	switch (ch) {
	case 'f':
	case 'i': {
		int64_t bits = natural(c);
		if (bits <= 0 || bits > 4096 || !eat(c, '_'))
			return bad(c);
		snprintf(buf, sizeof buf, "Builtin.%s%lld", ch == 'f' ? "FPIEEE" : "Int", (long long)bits);
		break;
	}
	case 'v': {
		int64_t n = natural(c);
		if (n <= 0 || n > 4096 || !eat(c, 'B'))
			return bad(c);
		int e = builtin(c);
		if (e < 0)
			return -1;
		int in = sw_kid(c, e, 0);
		if (c->fail || in < 0 || c->nodes[in].tlen < 8)
			return bad(c);
		snprintf(buf, sizeof buf, "Builtin.Vec%lldx%.*s", (long long)n, (int)c->nodes[in].tlen - 8,
		         c->nodes[in].text + 8);
		break;
	}
	case 'O': nm = "Builtin.UnknownObject"; break;
	case 'o': nm = "Builtin.NativeObject"; break;
	case 'b': nm = "Builtin.BridgeObject"; break;
	case 'p': nm = "Builtin.RawPointer"; break;
	case 't': nm = "Builtin.SILToken"; break;
	case 'w': nm = "Builtin.Word"; break;
	case 'B': nm = "Builtin.UnsafeValueBuffer"; break;
	default: return bad(c);
	}
	if (nm)
		return ty(c, mktext(c, SW_BuiltinType, nm));
	size_t l = strlen(buf);
	if (c->narena + l > SW_ARENA)
		return bad(c);
	char *o = c->arena + c->narena;
	c->narena += l;
	memcpy(o, buf, l);
	return ty(c, sw_new_text(c, SW_BuiltinType, o, l));
}

static int bound_kind(int k)
{
	switch (k) {
	case SW_Class: return SW_BoundGenericClass;
	case SW_Structure: return SW_BoundGenericStructure;
	case SW_Enum: return SW_BoundGenericEnum;
	}
	return -1;
}

static const char *impl_conv(int ch, int result)
{
	switch (ch) {
	case 'i': return result ? "@out" : "@in";
	case 'l': return "@inout";
	case 'o': return "@owned";
	case 'd': return "@unowned";
	case 'D': return "@unowned_inner_pointer";
	case 'a': return "@autoreleased";
	case 'g': return "@guaranteed";
	case 'e': return "@deallocating";
	}
	return NULL;
}

/* 'XF' callee-convention attributes '_' (convention type)* '_' (convention type)* '_' */
static int impl_function(sw_ctx *c)
{
	int f = sw_new(c, SW_ImplFunctionType);
	switch (next(c)) {
	case 'o': sw_add(c, f, mktext(c, SW_ImplAttr, "@callee_owned")); break;
	case 'd': sw_add(c, f, mktext(c, SW_ImplAttr, "@callee_unowned")); break;
	case 'g': sw_add(c, f, mktext(c, SW_ImplAttr, "@callee_guaranteed")); break;
	case 't': sw_add(c, f, mktext(c, SW_ImplAttr, "@convention(thin)")); break;
	default: return bad(c);
	}
	while (!eat(c, '_')) {
		int a = next(c);
		if (a == 'C') {
			int b = next(c);
			const char *t = b == 'b'   ? "@convention(block)"
			                : b == 'c' ? "@convention(c)"
			                : b == 'm' ? "@convention(method)"
			                : b == 'O' ? "@convention(objc_method)"
			                : b == 'w' ? "@convention(witness_method)"
			                           : NULL;
			if (!t)
				return bad(c);
			sw_add(c, f, mktext(c, SW_ImplAttr, t));
		} else if (a == 'N')
			sw_add(c, f, mktext(c, SW_ImplAttr, "@noreturn"));
		else if (a == 'G')
			sw_add(c, f, mktext(c, SW_ImplAttr, "@pseudogeneric"));
		else
			return bad(c);
	}
	for (int part = 0; part < 2; part++) {
		while (!eat(c, '_')) {
			if (c->fail || c->pos >= c->n)
				return bad(c);
			int kind = part ? SW_ImplResult : SW_ImplParameter;
			if (part && eat(c, 'z'))
				kind = SW_ImplErrorResult;
			const char *conv = impl_conv(next(c), part);
			if (!conv)
				return bad(c);
			int n = mktext(c, kind, conv);
			sw_add(c, n, type(c));
			sw_add(c, f, n);
		}
	}
	return ty(c, f);
}

/* Generic arguments, one '_'-terminated list per generic nesting level, outermost first. */
static int bound_args(sw_ctx *c, int nominal)
{
	if (nominal < 0 || enter(c) < 0)
		return bad(c);
	int k = c->nodes[nominal].kind;
	if (bound_kind(k) < 0 && k != SW_Protocol && k != SW_TypeAlias) {
		c->depth--;
		return bad(c);
	}
	int parent = sw_kid(c, nominal, 0);
	int pk = parent >= 0 ? c->nodes[parent].kind : -1;
	if (pk == SW_Class || pk == SW_Structure || pk == SW_Enum) {
		int np = bound_args(c, parent);
		if (np < 0)
			return -1;
		int rebuilt = sw_new(c, k);
		sw_add(c, rebuilt, np);
		for (int i = 1; i < c->nodes[nominal].nkids; i++)
			sw_add(c, rebuilt, sw_kid(c, nominal, i));
		nominal = rebuilt;
	}
	int tl = sw_new(c, SW_TypeList);
	while (!eat(c, '_')) {
		if (c->fail || c->pos >= c->n)
			return bad(c);
		sw_add(c, tl, type(c));
	}
	c->depth--;
	if (c->fail)
		return -1;
	if (c->nodes[tl].nkids == 0)
		return nominal;
	int bk = bound_kind(k);
	if (bk < 0)
		return bad(c);
	return mk2(c, bk, ty(c, nominal), tl);
}

static int type_(sw_ctx *c)
{
	int ch = next(c);
	switch (ch) {
	case 'B': return builtin(c);
	case 'a': return nominal(c, SW_TypeAlias);
	case 'b': return ty(c, sw_kid(c, function_type(c, SW_ObjCBlock), 0));
	case 'c': return ty(c, sw_kid(c, function_type(c, SW_CFunctionPointer), 0));
	case 'D': return ty(c, mk1(c, SW_DynamicSelf, type(c)));
	case 'E':
		if (!eat(c, 'R') || !eat(c, 'R'))
			return bad(c);
		return ty(c, sw_new(c, SW_ErrorType));
	case 'F': return function_type(c, SW_FunctionType);
	case 'f': return function_type(c, SW_FunctionType);
	case 'K': return function_type(c, SW_AutoClosureType);
	case 'G': {
		int base = type(c);
		if (base < 0)
			return -1;
		int b = bound_args(c, sw_kid(c, base, 0));
		if (b < 0 || b == sw_kid(c, base, 0))
			return bad(c);
		return ty(c, b);
	}
	case 'M': return ty(c, mk1(c, SW_Metatype, type(c)));
	case 'P':
		if (eat(c, 'M'))
			return ty(c, mk1(c, SW_ExistentialMetatype, type(c)));
		return ty(c, protocol_list(c));
	case 'Q': {
		if (eat(c, 'u'))
			return ty(c, mktext(c, SW_OpaqueReturnType, "some"));
		int64_t i = index_(c);
		if (i < 0)
			return -1;
		return gen_param(c, 0, (uint64_t)i);
	}
	case 'q': return generic_param_ref(c);
	case 'x': return gen_param(c, 0, 0);
	case 'w':
	case 'W': c->pos--; return dependent_type(c);
	case 'R': return ty(c, mk1(c, SW_InOut, type(c)));
	case 'S': {
		int s = substitution(c);
		if (s >= 0 && c->nodes[s].kind != SW_Type)
			return bad(c);
		return s;
	}
	case 'T': return tuple(c, 0);
	case 't': return tuple(c, 1);
	case 'u': {
		int sig = generic_signature(c, 0);
		int t = type(c);
		return ty(c, mk2(c, SW_DependentGenericType, sig, t));
	}
	case 'C': return nominal(c, SW_Class);
	case 'V': return nominal(c, SW_Structure);
	case 'O': return nominal(c, SW_Enum);
	case 'X': {
		int k = next(c);
		if (k == 'w')
			return ty(c, mk1(c, SW_Weak, type(c)));
		if (k == 'o')
			return ty(c, mk1(c, SW_Unowned, type(c)));
		if (k == 'u')
			return ty(c, mk1(c, SW_Unmanaged, type(c)));
		if (k == 'F')
			return impl_function(c);
		return bad(c);
	}
	default: return bad(c);
	}
}

static int type(sw_ctx *c)
{
	if (enter(c) < 0)
		return -1;
	int t = type_(c);
	c->depth--;
	if (c->fail || t < 0)
		return bad(c);
	return t;
}

static int context(sw_ctx *c)
{
	if (enter(c) < 0)
		return -1;
	int ch = peek(c);
	int r;
	switch (ch) {
	case 'E':
	case 'e': {
		c->pos++;
		int mod = module(c);
		int sig = ch == 'e' ? generic_signature(c, 0) : -1;
		int ctx = context(c);
		if (ctx < 0 || mod < 0)
			return bad(c);
		int e = sw_new(c, SW_Extension);
		sw_add(c, e, mod);
		sw_add(c, e, ctx);
		if (sig >= 0)
			sw_add(c, e, sig);
		r = e;
		break;
	}
	case 'S': {
		c->pos++;
		int s = substitution(c);
		r = s >= 0 && c->nodes[s].kind == SW_Type ? sw_kid(c, s, 0) : s;
		break;
	}
	case 'C':
	case 'V':
	case 'O':
	case 'P': {
		c->pos++;
		int t = nominal(c, ch == 'C' ? SW_Class : ch == 'V' ? SW_Structure : ch == 'O' ? SW_Enum : SW_Protocol);
		r = t >= 0 ? sw_kid(c, t, 0) : -1;
		break;
	}
	case 'F':
	case 'I':
	case 'v':
	case 'i': r = entity(c); break;
	case 'Z':
		c->pos++;
		r = mk1(c, SW_Static, entity(c));
		break;
	default: r = module(c); break;
	}
	c->depth--;
	return c->fail ? -1 : r;
}

static int with_type(sw_ctx *c, int n)
{
	sw_add(c, n, type(c));
	return n;
}

/* entity ::= ('F' | 'v' | 'I' | 'i') context entity-name */
static int entity(sw_ctx *c)
{
	if (enter(c) < 0)
		return -1;
	int kind = next(c);
	int ctx = context(c);
	if (ctx < 0) {
		c->depth--;
		return bad(c);
	}
	int r = -1;
	int ch = peek(c);
	int acc = -1;
	switch (ch) {
	case 'D':
		c->pos++;
		r = mk1(c, SW_Deallocator, ctx);
		break;
	case 'd':
		c->pos++;
		r = mk1(c, SW_Destructor, ctx);
		break;
	case 'Z':
		c->pos++;
		r = mk1(c, SW_IsolatedDeallocator, ctx);
		break;
	case 'E':
		c->pos++;
		r = mk1(c, SW_IVarDestroyer, ctx);
		break;
	case 'e':
		c->pos++;
		r = mk1(c, SW_IVarInitializer, ctx);
		break;
	case 'C':
	case 'c':
		c->pos++;
		r = with_type(c, mk1(c, ch == 'C' ? SW_Allocator : SW_Constructor, ctx));
		break;
	case 'U':
	case 'u': {
		c->pos++;
		int64_t i = index_(c);
		if (i < 0)
			break;
		r = sw_new_index(c, ch == 'U' ? SW_ExplicitClosure : SW_ImplicitClosure, (uint64_t)i);
		sw_add(c, r, ctx);
		with_type(c, r);
		break;
	}
	case 'A': {
		c->pos++;
		int64_t i = index_(c);
		if (i < 0)
			break;
		r = sw_new_index(c, SW_DefaultArgumentInitializer, (uint64_t)i);
		sw_add(c, r, ctx);
		break;
	}
	case 'i':
		if (kind == 'I') {
			c->pos++;
			r = mk1(c, SW_Initializer, ctx);
			break;
		}
		/* fallthrough */
	default: {
		switch (ch) {
		case 'g': acc = SW_Getter; break;
		case 's': acc = SW_Setter; break;
		case 'm': acc = SW_MaterializeForSet; break;
		case 'w': acc = SW_WillSet; break;
		case 'W': acc = SW_DidSet; break;
		case 'a':
		case 'l': {
			int d = c->pos + 1 < c->n ? (unsigned char)c->s[c->pos + 1] : 0;
			int mut = ch == 'a';
			switch (d) {
			case 'u': acc = mut ? SW_UnsafeMutableAddressor : SW_UnsafeAddressor; break;
			case 'O': acc = mut ? SW_OwningMutableAddressor : SW_OwningAddressor; break;
			case 'o': acc = mut ? SW_NativeOwningMutableAddressor : SW_NativeOwningAddressor; break;
			case 'p': acc = mut ? SW_NativePinningMutableAddressor : SW_NativePinningAddressor; break;
			}
			if (acc >= 0)
				c->pos++;
			break;
		}
		}
		if (acc >= 0)
			c->pos++;
		int storage_kind = kind == 'i' ? SW_Subscript : kind == 'v' || acc >= 0 ? SW_Variable : SW_Function;
		if (kind == 'i' || (acc >= 0 && peek(c) == 'F' && 0))
			storage_kind = SW_Subscript;
		int name = decl_name(c);
		if (name < 0)
			break;
		/* "subscript" is spelled as a name in the old mangling */
		if (storage_kind == SW_Variable && c->nodes[name].kind == SW_Identifier && c->nodes[name].tlen == 9 &&
		    !memcmp(c->nodes[name].text, "subscript", 9))
			storage_kind = SW_Subscript;
		int t = type(c);
		if (t < 0)
			break;
		int e = sw_new(c, storage_kind);
		sw_add(c, e, ctx);
		if (storage_kind != SW_Subscript)
			sw_add(c, e, name);
		sw_add(c, e, t);
		r = acc >= 0 ? mk1(c, acc, e) : e;
		break;
	}
	}
	c->depth--;
	return c->fail ? -1 : r;
}

static int conformance(sw_ctx *c)
{
	/* protocol-conformance ::= ('u' generic-signature)? type protocol module */
	int sig = -1;
	if (eat(c, 'u'))
		sig = generic_signature(c, 0);
	int t = type(c);
	int p = protocol_name(c);
	int m = module(c);
	if (t < 0 || p < 0 || m < 0)
		return bad(c);
	if (sig >= 0)
		t = ty(c, mk2(c, SW_DependentGenericType, sig, t));
	int n = sw_new(c, SW_ProtocolConformance);
	sw_add(c, n, t);
	sw_add(c, n, p);
	sw_add(c, n, m);
	return n;
}

static int arena_text(sw_ctx *c, int kind, const char *buf, size_t l)
{
	if (c->narena + l > SW_ARENA)
		return bad(c);
	char *o = c->arena + c->narena;
	c->narena += l;
	memcpy(o, buf, l);
	return sw_new_text(c, kind, o, l);
}

/* A payload that is itself a mangled name ("_TF…" of a closure or function): its demangling when
 * that works and uses all of it, else the raw text, as swift-demangle prints it. The inner name
 * has its own substitutions. */
static int mangled_payload(sw_ctx *c)
{
	int64_t len = natural(c);
	if (len <= 0 || (size_t)len > c->n - c->pos)
		return bad(c);
	size_t from = c->pos, to = c->pos + (size_t)len;
	int raw = sw_new_text(c, SW_Text, c->s + from, (size_t)len);
	if (c->fail)
		return -1;
	if (len > 2 && c->s[from] == '_' && c->s[from + 1] == 'T' && c->nsubst <= 64) {
		int saved[64];
		int ns = c->nsubst, depth = c->depth, nnodes = c->nnodes;
		size_t n = c->n, narena = c->narena;
		memcpy(saved, c->subst, (size_t)ns * sizeof *saved);
		c->n = to;
		c->pos = from + 2;
		c->nsubst = 0;
		int g = sw_new(c, SW_Global);
		int ok = global(c, g) >= 0 && !c->fail && c->pos == to;
		c->n = n;
		c->pos = to;
		c->depth = depth;
		c->nsubst = ns;
		memcpy(c->subst, saved, (size_t)ns * sizeof *saved);
		if (ok)
			return g;
		/* forget what the failed attempt built (its nodes are unreferenced) */
		c->fail = 0;
		c->nnodes = nnodes;
		c->narena = narena;
	}
	c->pos = to;
	return raw;
}

/* '_TTSf' PASS (ARG '_')* '_' '_T' global: function signature specialization. Argument kinds:
 * 'n' unchanged, 'd' dead, 'g' owned to guaranteed, 'o' guaranteed to owned, 's' exploded, 'i'
 * value promoted from box (several may combine); "cl" NAME TYPE* '_' a propagated closure; "cp…"
 * a propagated constant (fr function, g global, i integer, fl float, se string), whose payload
 * ends with its own '_'. */
static int fs_specialization(sw_ctx *c)
{
	int sp = mktext(c, SW_Specialization, "function signature specialization ");
	if (eat(c, 'q'))
		sw_add(c, sp, mktext(c, SW_SpecFlag, "serialized"));
	if (!is_digit(peek(c)))
		return bad(c);
	c->pos++;
	int arg = 0;
	while (!eat(c, '_')) {
		if (c->fail || c->pos >= c->n || arg > 64)
			return bad(c);
		char buf[160];
		size_t l = 0;
		l += (size_t)snprintf(buf, sizeof buf, "Arg[%d] = ", arg);
		size_t start = l;
		if (peek(c) == 'c') {
			c->pos++;
			int k = next(c);
			const char *what = NULL;
			int payload = -1, fs;
			if (k == 'l') {
				l += (size_t)snprintf(buf + l, sizeof buf - l, "[Closure Propagated : ");
				fs = arena_text(c, SW_FSSpec, buf, l);
				sw_add(c, fs, mangled_payload(c));
				int nt = 0;
				while (!eat(c, '_')) {
					if (c->fail || c->pos >= c->n || nt > 64)
						return bad(c);
					sw_add(c, fs, mktext(c, SW_Text, nt++ ? ", " : ", Argument Types : ["));
					sw_add(c, fs, type(c));
				}
				sw_add(c, fs, mktext(c, SW_Text, "]")); /* swift-demangle closes only one bracket */
			} else if (k == 'p') {
				int k2 = next(c);
				if (k2 == 'f' && eat(c, 'r'))
					what = "Function", payload = 1;
				else if (k2 == 'g')
					what = "Global", payload = 1;
				else if (k2 == 'i')
					what = "Integer", payload = 0;
				else if (k2 == 'f' && eat(c, 'l'))
					what = "Float", payload = 0;
				else if (k2 == 's' && eat(c, 'e'))
					what = "String", payload = 2;
				else
					return bad(c);
				l += (size_t)snprintf(buf + l, sizeof buf - l, "[Constant Propagated %s : ", what);
				if (payload == 0) {
					/* the literal as written, up to '_' */
					size_t b = c->pos;
					while (c->pos < c->n && c->s[c->pos] != '_')
						c->pos++;
					if (c->pos == b || c->pos - b > 64 || !eat(c, '_'))
						return bad(c);
					l += (size_t)snprintf(buf + l, sizeof buf - l, "%.*s]", (int)(c->pos - 1 - b),
					                      c->s + b);
					fs = arena_text(c, SW_FSSpec, buf, l);
				} else if (payload == 1) {
					fs = arena_text(c, SW_FSSpec, buf, l);
					sw_add(c, fs, mangled_payload(c));
					sw_add(c, fs, mktext(c, SW_Text, "]"));
					if (!eat(c, '_'))
						return bad(c);
				} else {
					int enc = next(c);
					const char *e = enc == '0'   ? "u8"
					                : enc == '1' ? "u16"
					                : enc == '2' ? "objc"
					                             : NULL;
					if (!e || !eat(c, 'v'))
						return bad(c);
					l += (size_t)snprintf(buf + l, sizeof buf - l, "%s'", e);
					fs = arena_text(c, SW_FSSpec, buf, l);
					int id = identifier(c);
					if (id < 0 || !eat(c, '_'))
						return bad(c);
					sw_n(c, id)->kind = SW_Text;
					sw_add(c, fs, id);
					sw_add(c, fs, mktext(c, SW_Text, "']"));
				}
			} else
				return bad(c);
			if (c->fail)
				return -1;
			sw_add(c, sp, fs);
			arg++;
			continue;
		}
		int printed = 0;
		while (!eat(c, '_')) {
			const char *t;
			switch (next(c)) {
			case 'n': t = NULL; break;
			case 'd': t = "Dead"; break;
			case 'g': t = "Owned To Guaranteed"; break;
			case 'o': t = "Guaranteed To Owned"; break;
			case 's': t = "Exploded"; break;
			case 'i': t = "Value Promoted from Box"; break;
			default: return bad(c);
			}
			if (!t)
				continue;
			l += (size_t)snprintf(buf + l, sizeof buf - l, "%s%s", l > start ? " and " : "", t);
			printed = 1;
			if (l >= sizeof buf - 1)
				return bad(c);
		}
		if (printed)
			sw_add(c, sp, arena_text(c, SW_FSSpec, buf, l));
		arg++;
	}
	if (!eat(c, '_') || !eat(c, 'T'))
		return bad(c);
	return sp;
}

static int attr_for(sw_ctx *c, const char *text, int child)
{
	if (child < 0)
		return bad(c);
	int n = mktext(c, SW_AttrFor, text);
	sw_add(c, n, child);
	return n;
}

static int global(sw_ctx *c, int g)
{
	if (enter(c) < 0)
		return -1;
	int ch = next(c);
	int r = -1;
	switch (ch) {
	case 't': r = type(c); break;
	case 'F':
	case 'v':
	case 'I':
	case 'i':
		c->pos--;
		r = entity(c);
		break;
	case 'M': {
		int k = peek(c);
		const char *t = "type metadata for ";
		switch (k) {
		case 'P': t = "generic type metadata pattern for "; break;
		case 'n': t = "nominal type descriptor for "; break;
		case 'm': t = "metaclass for "; break;
		case 'f': t = "full type metadata for "; break;
		case 'a': t = "type metadata accessor for "; break;
		case 'L': t = "type metadata lazy cache variable for "; break;
		case 'p': t = "protocol descriptor for "; break;
		default: k = 0;
		}
		if (k)
			c->pos++;
		r = attr_for(c, t, k == 'p' ? protocol_name(c) : type(c));
		break;
	}
	case 'w': {
		static const struct {
			char a, b;
			const char *name;
		} vw[] = {{'a', 'l', "allocateBuffer"},
		          {'c', 'a', "assignWithCopy"},
		          {'t', 'a', "assignWithTake"},
		          {'d', 'e', "deallocateBuffer"},
		          {'x', 'x', "destroy"},
		          {'X', 'X', "destroyBuffer"},
		          {'C', 'P', "initializeBufferWithCopyOfBuffer"},
		          {'C', 'p', "initializeBufferWithCopy"},
		          {'c', 'p', "initializeWithCopy"},
		          {'T', 'K', "initializeBufferWithTakeOfBuffer"},
		          {'T', 'k', "initializeBufferWithTake"},
		          {'t', 'k', "initializeWithTake"},
		          {'p', 'r', "projectBuffer"}};
		int a = next(c), b = next(c);
		const char *nm = NULL;
		for (size_t i = 0; i < sizeof vw / sizeof vw[0]; i++)
			if (vw[i].a == a && vw[i].b == b)
				nm = vw[i].name;
		if (!nm)
			return bad(c);
		int t = type(c);
		if (t < 0)
			return -1;
		r = sw_new_text(c, SW_ValueWitness, nm, strlen(nm));
		sw_add(c, r, t);
		break;
	}
	case 'W': {
		int k = next(c);
		switch (k) {
		case 'V': r = attr_for(c, "value witness table for ", type(c)); break;
		case 'v': {
			int d = next(c);
			const char *t = d == 'd'   ? "direct field offset for "
			                : d == 'i' ? "indirect field offset for "
			                           : NULL;
			if (!t)
				return bad(c);
			r = attr_for(c, t, entity(c));
			break;
		}
		case 'P': r = attr_for(c, "protocol witness table for ", conformance(c)); break;
		case 'G': r = attr_for(c, "generic protocol witness table for ", conformance(c)); break;
		case 'I':
			r = attr_for(c, "instantiation function for generic protocol witness table for ",
			             conformance(c));
			break;
		case 'a': r = attr_for(c, "protocol witness table accessor for ", conformance(c)); break;
		case 'l':
		case 'L': {
			int t = type(c);
			int cf = conformance(c);
			if (t < 0 || cf < 0)
				return bad(c);
			r = mktext(c, SW_AttrFor,
			           k == 'l' ? "lazy protocol witness table accessor for type "
			                    : "lazy protocol witness table cache variable for type ");
			sw_add(c, r, t);
			sw_add(c, r, cf);
			break;
		}
		case 't':
		case 'T': {
			int cf = conformance(c);
			int name = identifier(c);
			int proto = k == 'T' ? protocol_name(c) : -1;
			if (cf < 0 || name < 0 || (k == 'T' && proto < 0))
				return bad(c);
			r = sw_new_text(c, SW_AssocWitness, k == 't' ? "t" : "T", 1);
			sw_add(c, r, cf);
			sw_add(c, r, name);
			if (proto >= 0)
				sw_add(c, r, proto);
			break;
		}
		default: return bad(c);
		}
		break;
	}
	case 'T': {
		int k = next(c);
		switch (k) {
		case 'o':
		case 'O':
		case 'D': {
			sw_add(c, g, mktext(c, SW_Attr, k == 'o' ? "@objc " : k == 'O' ? "@nonobjc " : "dynamic "));
			c->depth--;
			return global(c, g);
		}
		case 'W': {
			int cf = conformance(c);
			int e = entity(c);
			r = mk2(c, SW_ProtocolWitness, cf, e);
			break;
		}
		case 'R':
		case 'r': {
			/* the thunk's own type first, then the type it adapts */
			int sig = eat(c, 'G') ? generic_signature(c, 0) : -1;
			int to = type(c);
			int from = type(c);
			if (to < 0 || from < 0)
				return bad(c);
			r = mktext(c, SW_ReabstractionThunk,
			           k == 'R' ? "reabstraction thunk helper " : "reabstraction thunk ");
			if (sig >= 0)
				sw_add(c, r, sig);
			sw_add(c, r, from);
			sw_add(c, r, to);
			break;
		}
		case 'S': {
			int kind = next(c);
			if (kind == 'f') {
				int sp = fs_specialization(c);
				if (sp < 0)
					return bad(c);
				sw_add(c, g, sp);
				c->depth--;
				c->nsubst = 0; /* the inner "_T…" is a mangled name of its own */
				return global(c, g);
			}
			const char *t = kind == 'g'   ? "generic specialization "
			                : kind == 'r' ? "generic not re-abstracted specialization "
			                              : NULL;
			if (!t)
				return bad(c);
			int sp = mktext(c, SW_Specialization, t);
			if (eat(c, 'q'))
				sw_add(c, sp, mktext(c, SW_SpecFlag, "serialized"));
			if (!is_digit(peek(c)))
				return bad(c);
			c->pos++;
			/* TYPE CONFORMANCE* '_' per parameter, then '_' */
			int np = 0;
			while (!eat(c, '_')) {
				if (c->fail || c->pos >= c->n || ++np > 64)
					return bad(c);
				int t1 = type(c);
				int par = mk1(c, SW_SpecializationParam, t1);
				while (!eat(c, '_')) {
					if (c->fail || c->pos >= c->n)
						return bad(c);
					sw_add(c, par, conformance(c));
				}
				sw_add(c, sp, par);
			}
			if (!np || !eat(c, '_') || !eat(c, 'T'))
				return bad(c);
			sw_add(c, g, sp);
			c->depth--;
			c->nsubst = 0; /* the inner "_T…" is a mangled name of its own */
			return global(c, g);
		}
		default: return bad(c);
		}
		break;
	}
	case 'P': {
		/* partial application forwarders: "PA" / "PAo", then '__T' and the global */
		if (!eat(c, 'A'))
			return bad(c);
		int objc = eat(c, 'o');
		if (!eat(c, '_') || !eat(c, '_') || !eat(c, 'T'))
			return bad(c);
		sw_add(c, g,
		       mktext(c, SW_PartialApply, objc ? "partial apply ObjC forwarder" : "partial apply forwarder"));
		c->depth--;
		c->nsubst = 0;
		return global(c, g);
	}
	default: return bad(c);
	}
	c->depth--;
	if (c->fail || r < 0)
		return bad(c);
	sw_add(c, g, r);
	return g;
}

int sw_parse_old(sw_ctx *c)
{
	c->old_fn = 1;
	int g = sw_new(c, SW_Global);
	if (global(c, g) < 0 || c->fail)
		return -1;
	if (c->pos < c->n) {
		/* anything after the mangled name is an unmangled suffix */
		sw_add(c, g, sw_new_text(c, SW_Suffix, c->s + c->pos, c->n - c->pos));
	}
	return c->fail ? -1 : g;
}
