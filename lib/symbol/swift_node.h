/*
 * Swift demangler internals: the node tree shared by the two parsers (current "$s" mangling and
 * the legacy "_T" one) and the printer. Not installed.
 *
 * Everything lives in one fixed-size context (no allocation): a node pool, a pool of child
 * indices, a byte arena for identifiers that had to be rebuilt (word substitutions, punycode),
 * the parse stack and the substitution table. Running out of any of them, or recursing too
 * deeply, makes the whole demangling fail, and the caller then shows the input unchanged.
 */
#ifndef TK_SWIFT_NODE_H
#define TK_SWIFT_NODE_H

#include <stddef.h>
#include <stdint.h>

#define SW_MAX_NODES 3000
#define SW_MAX_KIDS 6000
#define SW_MAX_STACK 512
#define SW_MAX_SUBST 512
#define SW_ARENA 8192
#define SW_MAX_DEPTH 96

#define SW_KINDS(X)                                                                                                                             \
	X(Global)                                                                                                                               \
	X(Suffix)                                                                                                                               \
	X(Type) X(Module) X(Identifier) X(Class) X(Structure) X(Enum) X(Protocol) X(TypeAlias) X(OtherNominal) X(                               \
	    BuiltinType) X(Function) X(Variable) X(Subscript) X(Constructor) X(Allocator) X(Destructor) X(Deallocator)                          \
	    X(IsolatedDeallocator) X(ExplicitClosure) X(ImplicitClosure) X(Static) X(Extension) X(LocalDeclName) X(                             \
	        PrivateDeclName) X(RelatedEntityDeclName) X(InfixOperator) X(PrefixOperator) X(PostfixOperator)                                 \
	        X(LabelList) X(FunctionType) X(NoEscapeFunctionType) X(CFunctionPointer) X(ObjCBlock) X(                                        \
	            AutoClosureType) X(ThinFunctionType) X(EscapingAutoClosureType) X(ArgumentTuple) X(ReturnType)                              \
	            X(Tuple) X(TupleElement) X(TupleElementName) X(VariadicMarker) X(ThrowsAnnotation) X(                                       \
	                TypedThrowsAnnotation) X(AsyncAnnotation) X(ConcurrentFunctionType) X(GlobalActorFunctionType)                          \
	                X(IsolatedAnyFunctionType) X(NonIsolatedCallerFunctionType) X(SendingResultFunctionType) X(                             \
	                    DifferentiableFunctionType) X(InOut) X(Shared) X(Owned) X(Isolated) X(Sending)                                      \
	                    X(CompileTimeLiteral) X(NoDerivative) X(BoundGenericClass) X(BoundGenericStructure) X(                              \
	                        BoundGenericEnum) X(BoundGenericProtocol) X(BoundGenericOtherNominal)                                           \
	                        X(BoundGenericTypeAlias) X(TypeList) X(EmptyList) X(FirstElementMarker) X(                                      \
	                            DependentGenericParamType) X(DependentMemberType) X(DependentAssociatedTypeRef)                             \
	                            X(DependentGenericSignature) X(DependentGenericType) X(GenericParamCount) X(                                \
	                                ConformanceReq) X(SameTypeReq) X(LayoutReq) X(InverseReq) X(LayoutConstraint)                           \
	                                X(Metatype) X(ExistentialMetatype) X(ProtocolList) X(ProtocolListWithClass) X(                          \
	                                    ProtocolListWithAnyObject) X(ConstrainedExistential) X(OpaqueReturnType) X(OpaqueType)              \
	                                    X(OpaqueTypeDescriptorRef) X(Weak) X(Unowned) X(Unmanaged) X(DynamicSelf) X(                        \
	                                        ErrorType) X(Getter) X(Setter) X(ModifyAccessor) X(ReadAccessor) X(Modify2) X(Read2)            \
	                                        X(WillSet) X(DidSet) X(GlobalGetter) X(MaterializeForSet) X(UnsafeAddressor) X(                 \
	                                            UnsafeMutableAddressor) X(OwningAddressor) X(OwningMutableAddressor)                        \
	                                            X(NativeOwningAddressor) X(NativeOwningMutableAddressor) X(NativePinningAddressor) X(       \
	                                                NativePinningMutableAddressor) X(InitAccessor) X(Initializer)                           \
	                                                X(DefaultArgumentInitializer) X(IVarInitializer) X(IVarDestroyer) X(                    \
	                                                    Number) X(Index) X(Attr) X(AttrFor) X(AttrOf) X(Text)                               \
	                                                    X(Specialization) X(SpecializationParam) X(SpecializationPassID) X(SpecFlag) X(     \
	                                                        FunctionSignatureSpecialization) X(FSSParam) X(FSSParamKind) X(FSSParamPayload) \
	                                                        X(Thunk) X(ReabstractionThunk) X(ReabstractionThunkHelper) X(                   \
	                                                            ProtocolWitness) X(ProtocolConformance)                                     \
	                                                            X(ConcreteProtocolConformance) X(ValueWitness) X(                           \
	                                                                FieldOffset) X(ImplFunctionType) X(ImplParameter)                       \
	                                                                X(ImplResult) X(ImplErrorResult) X(ImplYield) X(                        \
	                                                                    ImplConvention) X(ImplAttr) X(ImplEscaping)                         \
	                                                                    X(ImplFunctionConvention) X(AsyncPartial) X(                        \
	                                                                        OutlinedVariable) X(OutlinedBridged)                            \
	                                                                        X(MergedFunction) X(DispatchThunk) X(                           \
	                                                                            PartialApply) X(AnonymousContext)                           \
	                                                                            X(ModuleContextLocation) X(MacroExpansion) X(               \
	                                                                                UniqueName) X(AccessibleFunctionRecord) X(Pack)         \
	                                                                                X(PackExpansion) X(                                     \
	                                                                                    Integer) X(NegativeInteger) X(SILBoxType)           \
	                                                                                    X(ClangType) X(ObjCAttr) X(                         \
	                                                                                        NonObjCAttr) X(DynamicAttr)                     \
	                                                                                        X(DirectMethodRefAttr) X(                       \
	                                                                                            CoroFuncPtr) X(DefaultOverride)             \
	                                                                                            X(Entity) X(AssocWitness) X(                \
	                                                                                                RetroactiveConformance)                 \
	                                                                                                X(ProtocolConformanceRef) X(            \
	                                                                                                    DependentConformance)               \
	                                                                                                    X(ConformanceList)                  \
	                                                                                                        X(FSSpec) X(                    \
	                                                                                                            BoundGenericFunction)       \
	                                                                                                            X(AutoDiff)                 \
	                                                                                                                X(SugaredInlineArray)

enum sw_kind {
#define SW_ENUM(n) SW_##n,
	SW_KINDS(SW_ENUM)
#undef SW_ENUM
	    SW_NKINDS
};

typedef struct sw_node {
	uint16_t kind;
	uint16_t nkids, cap;
	uint32_t kids; /* first index in the child pool */
	const char *text;
	uint32_t tlen;
	uint64_t index;
} sw_node;

typedef struct sw_ctx {
	const char *s;
	size_t n, pos;
	int fail;
	int depth;
	int nnodes, nkidpool;
	size_t narena;
	int sp, nsubst, nwords;
	int old_fn; /* "_T0": labels inside the tuple */
	sw_node nodes[SW_MAX_NODES];
	uint32_t kidpool[SW_MAX_KIDS];
	int stack[SW_MAX_STACK];
	int subst[SW_MAX_SUBST];
	struct {
		const char *p;
		uint32_t len;
	} words[26];
	char arena[SW_ARENA];
} sw_ctx;

int sw_new_text(sw_ctx *c, int kind, const char *t, size_t len);
int sw_new_index(sw_ctx *c, int kind, uint64_t idx);
void sw_add_slow(sw_ctx *c, int parent, int child);

/* A new node; when the pool is full, node 0 (a scratch node) and c->fail, which makes the whole
 * result be thrown away: callers may touch what they get before they look at c->fail. */
static inline int sw_new(sw_ctx *c, int kind)
{
	if (__builtin_expect(c->nnodes >= SW_MAX_NODES, 0)) {
		c->fail = 1;
		return 0;
	}
	sw_node *n = &c->nodes[c->nnodes];
	n->kind = (uint16_t)kind;
	n->nkids = n->cap = 0;
	n->kids = 0;
	n->text = NULL;
	n->tlen = 0;
	n->index = 0;
	return c->nnodes++;
}

static inline void sw_add(sw_ctx *c, int p, int k)
{
	if (__builtin_expect(p > 0 && k > 0 && !c->fail, 1)) {
		sw_node *n = &c->nodes[p];
		if (n->nkids < n->cap) {
			c->kidpool[n->kids + n->nkids++] = (uint32_t)k;
			return;
		}
		/* the first child (most nodes have one or two): room for two, without a call */
		if (n->cap == 0 && c->nkidpool + 2 <= SW_MAX_KIDS) {
			n->kids = (uint32_t)c->nkidpool;
			n->cap = 2;
			c->nkidpool += 2;
			c->kidpool[n->kids] = (uint32_t)k;
			n->nkids = 1;
			return;
		}
	}
	sw_add_slow(c, p, k);
}
static inline sw_node *sw_n(sw_ctx *c, int i)
{
	return &c->nodes[i];
}
static inline int sw_kid(const sw_ctx *c, int i, int k)
{
	return i >= 0 && k >= 0 && k < c->nodes[i].nkids ? (int)c->kidpool[c->nodes[i].kids + (unsigned)k] : -1;
}

/* RFC 3492 with Swift's alphabet; the UTF-8 result goes to the arena. 0 or -1. */
int sw_punycode(sw_ctx *c, const char *in, size_t len, const char **out, size_t *olen);

/* Parsers: return the Global node or -1. */
int sw_parse_new(sw_ctx *c);
int sw_parse_old(sw_ctx *c);

/* Printer: writes at most cap-1 bytes + NUL; returns the length, or -1 if it did not fit. */
int sw_print(sw_ctx *c, int root, int simplified, char *out, size_t cap);

#endif
