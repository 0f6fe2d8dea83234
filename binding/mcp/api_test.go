package mcp_test

// Black-box tests of the flyweights generated from idl/mcp.idl. They use only
// the exported API, so a template change that breaks users fails here.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/idl/flyweight"
)

// Distinctive values: every byte differs, so a wrong width, offset or byte
// order shows.
const (
	cid int64 = 0x0102030405060708
	tid int32 = 0x0a0b0c0d
)

// sentinel fills the bytes a builder must not touch.
const sentinel = 0xa5

// ---------------------------------------------------------------------------
// Hand encoding of the expected bytes (little-endian, see idl/mcp.idl).

type enc []byte

// add appends to a copy, so that encodings sharing a prefix never alias.
func (e enc) add(b ...byte) enc { return append(e[:len(e):len(e)], b...) }

func (e enc) u8(v uint8) enc   { return e.add(v) }
func (e enc) u16(v uint16) enc { return e.add(binary.LittleEndian.AppendUint16(nil, v)...) }
func (e enc) i32(v int32) enc  { return e.add(binary.LittleEndian.AppendUint32(nil, uint32(v))...) }
func (e enc) i64(v int64) enc  { return e.add(binary.LittleEndian.AppendUint64(nil, uint64(v))...) }

// str16 is a string16: an int16 length, then the bytes.
func (e enc) str16(s string) enc { return e.u16(uint16(len(s))).add([]byte(s)...) }

// null16 is the null string16: length -1.
func (e enc) null16() enc { return e.u16(0xffff) }

// ext is the core::stream::Extension prefix.
func (e enc) ext(compositeID int64, typeID int32) enc { return e.i64(compositeID).i32(typeID) }

// ---------------------------------------------------------------------------
// Decoded values.

// nstr is a decoded string field: its text, or null.
type nstr struct {
	null bool
	s    string
}

func text(s string) nstr { return nstr{s: s} }

var null = nstr{null: true}

// strOf reads a string field through its three getters (HasX, X, XString)
// and folds them into one value; getters that disagree give a value that
// matches nothing.
func strOf(has bool, b []byte, s string) nstr {
	if has != (b != nil) || s != string(b) || cap(b) != len(b) {
		return nstr{s: fmt.Sprintf("inconsistent getters: Has=%v bytes=%q (cap %d) string=%q", has, b, cap(b), s)}
	}
	if !has {
		return null
	}
	return text(s)
}

type sessionIDer interface {
	HasSessionID() bool
	SessionID() []byte
	SessionIDString() string
}

func sessionID(v sessionIDer) nstr {
	return strOf(v.HasSessionID(), v.SessionID(), v.SessionIDString())
}

type ider interface {
	HasID() bool
	ID() []byte
	IDString() string
}

func id(v ider) nstr { return strOf(v.HasID(), v.ID(), v.IDString()) }

// Readers of every case struct: each returns all getter values in IDL order.

func readLifecycle(v *mcp.McpLifecycleBeginEx) []any {
	return []any{sessionID(v), v.Capabilities(), strOf(v.HasAuthCallback(), v.AuthCallback(), v.AuthCallbackString())}
}

// readSessionTimeout reads toolsList, promptsList, resourcesList and
// resourcesTemplatesList.
func readSessionTimeout[V interface {
	sessionIDer
	Timeout() int64
}](v V) []any {
	return []any{sessionID(v), v.Timeout()}
}

// readNamedCall reads toolsCall and promptsGet.
func readNamedCall[V interface {
	sessionIDer
	HasName() bool
	Name() []byte
	NameString() string
	ContentLength() int32
	Timeout() int64
}](v V) []any {
	return []any{sessionID(v), strOf(v.HasName(), v.Name(), v.NameString()), v.ContentLength(), v.Timeout()}
}

// readURICall reads resourcesRead, resourcesSubscribe and resourcesUnsubscribe.
func readURICall[V interface {
	sessionIDer
	HasURI() bool
	URI() []byte
	URIString() string
	ContentLength() int32
	Timeout() int64
}](v V) []any {
	return []any{sessionID(v), strOf(v.HasURI(), v.URI(), v.URIString()), v.ContentLength(), v.Timeout()}
}

// readID reads the cases whose only field is id.
func readID[V ider](v V) []any { return []any{id(v)} }

func readProgress(v *mcp.McpProgressFlushEx) []any {
	return []any{id(v), strOf(v.HasToken(), v.Token(), v.TokenString()), v.Progress(), v.Total(),
		strOf(v.HasMessage(), v.Message(), v.MessageString())}
}

func readSuspend(v *mcp.McpSuspendFlushEx) []any { return []any{v.Retry()} }

func readElicitCallback(v *mcp.McpElicitCallbackFlushEx) []any {
	return []any{strOf(v.HasURL(), v.URL(), v.URLString()),
		strOf(v.HasCorrelationID(), v.CorrelationID(), v.CorrelationIDString())}
}

func readElicitResponse(v *mcp.McpElicitResponseFlushEx) []any {
	return []any{strOf(v.HasCorrelationID(), v.CorrelationID(), v.CorrelationIDString()), v.Action()}
}

func readResourcesUpdated(v *mcp.McpResourcesUpdatedFlushEx) []any {
	return []any{id(v), strOf(v.HasURI(), v.URI(), v.URIString())}
}

func readSuspended(*mcp.McpSuspendedChallengeEx) []any { return nil }

func readElicitCreate(v *mcp.McpElicitCreateChallengeEx) []any {
	return []any{id(v), strOf(v.HasURL(), v.URL(), v.URLString()), strOf(v.HasMessage(), v.Message(), v.MessageString()),
		strOf(v.HasCorrelationID(), v.CorrelationID(), v.CorrelationIDString())}
}

func readBearer(v *mcp.McpBearerResetEx) []any {
	return []any{strOf(v.HasRealm(), v.Realm(), v.RealmString()), strOf(v.HasScopes(), v.Scopes(), v.ScopesString()),
		strOf(v.HasResourceMetadata(), v.ResourceMetadata(), v.ResourceMetadataString()), v.Error()}
}

func readErrorReset(v *mcp.McpErrorResetEx) []any {
	return []any{v.Code(), strOf(v.HasMessage(), v.Message(), v.MessageString())}
}

func readSessionEstablished(v *mcp.McpSessionEstablishedEx) []any { return []any{sessionID(v)} }

func readSessionClosed(v *mcp.McpSessionClosedEx) []any {
	return []any{sessionID(v), strOf(v.HasReason(), v.Reason(), v.ReasonString())}
}

func readAuthorizationFailed(v *mcp.McpAuthorizationFailedEx) []any {
	return []any{strOf(v.HasRealm(), v.Realm(), v.RealmString()), strOf(v.HasScopes(), v.Scopes(), v.ScopesString()),
		strOf(v.HasResourceMetadata(), v.ResourceMetadata(), v.ResourceMetadataString()), v.Error()}
}

func readElicitationTimeout(v *mcp.McpElicitationTimeoutEx) []any {
	return []any{sessionID(v), strOf(v.HasElicitationID(), v.ElicitationID(), v.ElicitationIDString())}
}

func readAbortEx(v *mcp.McpAbortEx) []any {
	return []any{v.CompositeID(), v.TypeID(), strOf(v.HasReason(), v.Reason(), v.ReasonString())}
}

func readEndEx(v *mcp.McpEndEx) []any { return []any{v.CompositeID(), v.TypeID(), v.Outcome()} }

// ---------------------------------------------------------------------------
// Type-erased round-trip cases.

// reader is the API every generated view has.
type reader[V any] interface {
	*V
	Wrap(buf []byte, off, limit int) error
	TryWrap(buf []byte, off, limit int) bool
	Offset() int
	Limit() int
	Sizeof() int
	Buffer() []byte
}

// builder is the API every generated builder has.
type builder[B, V any] interface {
	*B
	Wrap(buf []byte, off, maxLimit int) *B
	Build() (V, error)
	BuildLimit() (int, error)
	Limit() int
}

// unionReader is the API of a union view that extends core::stream::Extension.
type unionReader[U any, K ~uint8] interface {
	reader[U]
	CompositeID() int64
	TypeID() int32
	Kind() K
}

// unionBuilder is the API of a union builder that extends core::stream::Extension.
type unionBuilder[UB, U any] interface {
	builder[UB, U]
	CompositeID(int64) *UB
	TypeID(int32) *UB
}

// span is what a reader says about where its value lies.
type span struct {
	off, limit, size int
	sameBuf          bool // Buffer() is the wrapped slice
	try              bool // TryWrap's answer
}

// structCase is one scenario of one generated type, erased of its types.
type structCase struct {
	name string
	typ  string // the Go type name, as reported in *flyweight.Error
	body enc    // the expected encoding
	want []any  // the expected getter values
	// build runs the scenario's setters at buf[off:maxLimit], then Build,
	// and reads the returned view.
	build func(buf []byte, off, maxLimit int) (limit int, got []any, err error)
	// buildLimit runs the setters, then BuildLimit; builderLimit is the
	// builder's Limit() afterwards.
	buildLimit func(buf []byte, off, maxLimit int) (limit, builderLimit int, err error)
	// wrap wraps a fresh reader over buf[off:limit] and reads it.
	wrap func(buf []byte, off, limit int) (span, []any, error)
}

type structType[B any, PB builder[B, V], V any, PV reader[V]] struct {
	read func(*V) []any
}

func typeName[V any]() string { return reflect.TypeFor[V]().Name() }

func (st structType[B, PB, V, PV]) scenario(name string, set func(*B), body enc, want ...any) structCase {
	typ := typeName[V]()
	start := func(buf []byte, off, maxLimit int) PB {
		var b B
		PB(&b).Wrap(buf, off, maxLimit)
		if set != nil {
			set(&b)
		}
		return &b
	}
	return structCase{
		name: typ + "/" + name,
		typ:  typ,
		body: body,
		want: want,
		build: func(buf []byte, off, maxLimit int) (int, []any, error) {
			v, err := start(buf, off, maxLimit).Build()
			if err != nil {
				return 0, nil, err
			}
			return PV(&v).Limit(), st.read(&v), nil
		},
		buildLimit: func(buf []byte, off, maxLimit int) (int, int, error) {
			b := start(buf, off, maxLimit)
			limit, err := b.BuildLimit()
			return limit, b.Limit(), err
		},
		wrap: func(buf []byte, off, limit int) (span, []any, error) {
			var probe V
			sp := span{try: PV(&probe).TryWrap(buf, off, limit)}
			var v V
			if err := PV(&v).Wrap(buf, off, limit); err != nil {
				return sp, nil, err
			}
			b := PV(&v).Buffer()
			sp.off, sp.limit, sp.size = PV(&v).Offset(), PV(&v).Limit(), PV(&v).Sizeof()
			sp.sameBuf = len(b) == len(buf) && (len(b) == 0 || &b[0] == &buf[0])
			return sp, st.read(&v), nil
		},
	}
}

// unionHeader is the size of compositeId, typeId and the uint8 kind.
const unionHeader = 13

// caseType describes one case of one union: UB/U are the union's builder and
// view, B/V the case struct's.
type caseType[UB any, PUB unionBuilder[UB, U], U any, PU unionReader[U, K], K ~uint8, B any, PB builder[B, V], V any, PV reader[V]] struct {
	field string
	kind  K
	sel   func(*UB) *B
	get   func(*U) V
	read  func(*V) []any
}

func newCase[UB any, PUB unionBuilder[UB, U], U any, PU unionReader[U, K], K ~uint8, B any, PB builder[B, V], V any, PV reader[V]](
	field string, kind K, sel func(*UB) *B, get func(*U) V, read func(*V) []any,
) caseType[UB, PUB, U, PU, K, B, PB, V, PV] {
	return caseType[UB, PUB, U, PU, K, B, PB, V, PV]{field: field, kind: kind, sel: sel, get: get, read: read}
}

// cases returns the scenario twice: the case struct built on its own, and
// the union built with this case selected.
func (c caseType[UB, PUB, U, PU, K, B, PB, V, PV]) cases(name string, set func(*B), body enc, want ...any) []structCase {
	alone := structType[B, PB, V, PV]{read: c.read}.scenario(name, set, body, want...)
	union := structType[UB, PUB, U, PU]{read: func(u *U) []any {
		got := []any{PU(u).CompositeID(), PU(u).TypeID(), PU(u).Kind()}
		if PU(u).Kind() != c.kind {
			return got // the case getter is meaningless for another kind
		}
		v := c.get(u)
		got = append(got, PV(&v).Offset()-PU(u).Offset(), PU(u).Limit()-PV(&v).Limit())
		return append(got, c.read(&v)...)
	}}.scenario(c.field+"/"+name, func(ub *UB) {
		b := c.sel(PUB(PUB(ub).CompositeID(cid)).TypeID(tid))
		if set != nil {
			set(b)
		}
	},
		enc{}.ext(cid, tid).u8(uint8(c.kind)).add(body...),
		// the case view starts after the union header and ends with the union
		append([]any{cid, tid, c.kind, unionHeader, 0}, want...)...)
	return []structCase{alone, union}
}

// Case descriptors of every union.
var (
	lifecycle              = newCase("lifecycle", mcp.McpBeginExKindLifecycle, (*mcp.McpBeginExBuilder).Lifecycle, (*mcp.McpBeginEx).Lifecycle, readLifecycle)
	toolsList              = newCase("toolsList", mcp.McpBeginExKindToolsList, (*mcp.McpBeginExBuilder).ToolsList, (*mcp.McpBeginEx).ToolsList, readSessionTimeout[*mcp.McpToolsListBeginEx])
	toolsCall              = newCase("toolsCall", mcp.McpBeginExKindToolsCall, (*mcp.McpBeginExBuilder).ToolsCall, (*mcp.McpBeginEx).ToolsCall, readNamedCall[*mcp.McpToolsCallBeginEx])
	promptsList            = newCase("promptsList", mcp.McpBeginExKindPromptsList, (*mcp.McpBeginExBuilder).PromptsList, (*mcp.McpBeginEx).PromptsList, readSessionTimeout[*mcp.McpPromptsListBeginEx])
	promptsGet             = newCase("promptsGet", mcp.McpBeginExKindPromptsGet, (*mcp.McpBeginExBuilder).PromptsGet, (*mcp.McpBeginEx).PromptsGet, readNamedCall[*mcp.McpPromptsGetBeginEx])
	resourcesList          = newCase("resourcesList", mcp.McpBeginExKindResourcesList, (*mcp.McpBeginExBuilder).ResourcesList, (*mcp.McpBeginEx).ResourcesList, readSessionTimeout[*mcp.McpResourcesListBeginEx])
	resourcesRead          = newCase("resourcesRead", mcp.McpBeginExKindResourcesRead, (*mcp.McpBeginExBuilder).ResourcesRead, (*mcp.McpBeginEx).ResourcesRead, readURICall[*mcp.McpResourcesReadBeginEx])
	resourcesTemplatesList = newCase("resourcesTemplatesList", mcp.McpBeginExKindResourcesTemplatesList, (*mcp.McpBeginExBuilder).ResourcesTemplatesList, (*mcp.McpBeginEx).ResourcesTemplatesList, readSessionTimeout[*mcp.McpResourcesTemplatesListBeginEx])
	resourcesSubscribe     = newCase("resourcesSubscribe", mcp.McpBeginExKindResourcesSubscribe, (*mcp.McpBeginExBuilder).ResourcesSubscribe, (*mcp.McpBeginEx).ResourcesSubscribe, readURICall[*mcp.McpResourcesSubscribeBeginEx])
	resourcesUnsubscribe   = newCase("resourcesUnsubscribe", mcp.McpBeginExKindResourcesUnsubscribe, (*mcp.McpBeginExBuilder).ResourcesUnsubscribe, (*mcp.McpBeginEx).ResourcesUnsubscribe, readURICall[*mcp.McpResourcesUnsubscribeBeginEx])

	resumable            = newCase("resumable", mcp.McpFlushExKindResumable, (*mcp.McpFlushExBuilder).Resumable, (*mcp.McpFlushEx).Resumable, readID[*mcp.McpResumableFlushEx])
	toolsListChanged     = newCase("toolsListChanged", mcp.McpFlushExKindToolsListChanged, (*mcp.McpFlushExBuilder).ToolsListChanged, (*mcp.McpFlushEx).ToolsListChanged, readID[*mcp.McpToolsListChangedFlushEx])
	promptsListChanged   = newCase("promptsListChanged", mcp.McpFlushExKindPromptsListChanged, (*mcp.McpFlushExBuilder).PromptsListChanged, (*mcp.McpFlushEx).PromptsListChanged, readID[*mcp.McpPromptsListChangedFlushEx])
	resourcesListChanged = newCase("resourcesListChanged", mcp.McpFlushExKindResourcesListChanged, (*mcp.McpFlushExBuilder).ResourcesListChanged, (*mcp.McpFlushEx).ResourcesListChanged, readID[*mcp.McpResourcesListChangedFlushEx])
	progress             = newCase("progress", mcp.McpFlushExKindProgress, (*mcp.McpFlushExBuilder).Progress, (*mcp.McpFlushEx).Progress, readProgress)
	suspend              = newCase("suspend", mcp.McpFlushExKindSuspend, (*mcp.McpFlushExBuilder).Suspend, (*mcp.McpFlushEx).Suspend, readSuspend)
	elicitCallback       = newCase("elicitCallback", mcp.McpFlushExKindElicitCallback, (*mcp.McpFlushExBuilder).ElicitCallback, (*mcp.McpFlushEx).ElicitCallback, readElicitCallback)
	elicitComplete       = newCase("elicitComplete", mcp.McpFlushExKindElicitComplete, (*mcp.McpFlushExBuilder).ElicitComplete, (*mcp.McpFlushEx).ElicitComplete, readID[*mcp.McpElicitCompleteFlushEx])
	elicitResponse       = newCase("elicitResponse", mcp.McpFlushExKindElicitResponse, (*mcp.McpFlushExBuilder).ElicitResponse, (*mcp.McpFlushEx).ElicitResponse, readElicitResponse)
	resourcesUpdated     = newCase("resourcesUpdated", mcp.McpFlushExKindResourcesUpdated, (*mcp.McpFlushExBuilder).ResourcesUpdated, (*mcp.McpFlushEx).ResourcesUpdated, readResourcesUpdated)

	resume       = newCase("resume", mcp.McpChallengeExKindResume, (*mcp.McpChallengeExBuilder).Resume, (*mcp.McpChallengeEx).Resume, readID[*mcp.McpResumeChallengeEx])
	suspended    = newCase("suspended", mcp.McpChallengeExKindSuspended, (*mcp.McpChallengeExBuilder).Suspended, (*mcp.McpChallengeEx).Suspended, readSuspended)
	elicitCreate = newCase("elicitCreate", mcp.McpChallengeExKindElicitCreate, (*mcp.McpChallengeExBuilder).ElicitCreate, (*mcp.McpChallengeEx).ElicitCreate, readElicitCreate)

	bearer     = newCase("bearer", mcp.McpResetExKindBearer, (*mcp.McpResetExBuilder).Bearer, (*mcp.McpResetEx).Bearer, readBearer)
	errorReset = newCase("error", mcp.McpResetExKindError, (*mcp.McpResetExBuilder).Error, (*mcp.McpResetEx).Error, readErrorReset)

	sessionEstablished  = newCase("sessionEstablished", mcp.McpEventExKindSessionEstablished, (*mcp.McpEventExBuilder).SessionEstablished, (*mcp.McpEventEx).SessionEstablished, readSessionEstablished)
	sessionClosed       = newCase("sessionClosed", mcp.McpEventExKindSessionClosed, (*mcp.McpEventExBuilder).SessionClosed, (*mcp.McpEventEx).SessionClosed, readSessionClosed)
	authorizationFailed = newCase("authorizationFailed", mcp.McpEventExKindAuthorizationFailed, (*mcp.McpEventExBuilder).AuthorizationFailed, (*mcp.McpEventEx).AuthorizationFailed, readAuthorizationFailed)
	elicitationTimeout  = newCase("elicitationTimeout", mcp.McpEventExKindElicitationTimeout, (*mcp.McpEventExBuilder).ElicitationTimeout, (*mcp.McpEventEx).ElicitationTimeout, readElicitationTimeout)
)

// mcpCases lists every scenario of every type: each union case both alone
// and inside its union, plus McpAbortEx and McpEndEx.
func mcpCases() []structCase {
	caps := uint16(mcp.McpCapabilitiesServerTools | mcp.McpCapabilitiesClientElicitation | mcp.McpCapabilitiesServerResourcesSubscribe)
	abort := structType[mcp.McpAbortExBuilder, *mcp.McpAbortExBuilder, mcp.McpAbortEx, *mcp.McpAbortEx]{read: readAbortEx}
	end := structType[mcp.McpEndExBuilder, *mcp.McpEndExBuilder, mcp.McpEndEx, *mcp.McpEndEx]{read: readEndEx}

	var cases []structCase
	add := func(cs ...[]structCase) {
		for _, c := range cs {
			cases = append(cases, c...)
		}
	}
	add(
		// McpBeginEx
		lifecycle.cases("all set",
			func(b *mcp.McpLifecycleBeginExBuilder) {
				b.SessionID("sess-lifecycle").Capabilities(caps).AuthCallback("https://auth.example/cb")
			},
			enc{}.str16("sess-lifecycle").u16(caps).str16("https://auth.example/cb"),
			text("sess-lifecycle"), caps, text("https://auth.example/cb")),
		lifecycle.cases("defaults",
			nil,
			enc{}.null16().u16(0).null16(),
			null, uint16(0), null),
		lifecycle.cases("explicit nulls, capabilities default between them",
			func(b *mcp.McpLifecycleBeginExBuilder) { b.SessionIDNull().AuthCallbackNull() },
			enc{}.null16().u16(0).null16(),
			null, uint16(0), null),
		lifecycle.cases("only authCallback set",
			func(b *mcp.McpLifecycleBeginExBuilder) { b.AuthCallback("cb") },
			enc{}.null16().u16(0).str16("cb"),
			null, uint16(0), text("cb")),
		lifecycle.cases("only capabilities set",
			func(b *mcp.McpLifecycleBeginExBuilder) { b.Capabilities(0xfffe) },
			enc{}.null16().u16(0xfffe).null16(),
			null, uint16(0xfffe), null),
		lifecycle.cases("bytes setters, empty sessionId",
			func(b *mcp.McpLifecycleBeginExBuilder) {
				b.SessionIDBytes([]byte{}).Capabilities(0xffff).AuthCallbackBytes([]byte("cb\x00\xff"))
			},
			enc{}.str16("").u16(0xffff).str16("cb\x00\xff"),
			text(""), uint16(0xffff), text("cb\x00\xff")),
		toolsList.cases("all set",
			func(b *mcp.McpToolsListBeginExBuilder) { b.SessionID("sess-tools-list").Timeout(45000) },
			enc{}.str16("sess-tools-list").i64(45000),
			text("sess-tools-list"), int64(45000)),
		toolsList.cases("timeout default",
			func(b *mcp.McpToolsListBeginExBuilder) { b.SessionID("sess-tl") },
			enc{}.str16("sess-tl").i64(0),
			text("sess-tl"), int64(0)),
		toolsCall.cases("all set",
			func(b *mcp.McpToolsCallBeginExBuilder) {
				b.SessionID("sess-tools-call").Name("get_weather").ContentLength(512).Timeout(30000)
			},
			enc{}.str16("sess-tools-call").str16("get_weather").i32(512).i64(30000),
			text("sess-tools-call"), text("get_weather"), int32(512), int64(30000)),
		toolsCall.cases("defaults",
			func(b *mcp.McpToolsCallBeginExBuilder) { b.SessionID("sess-tc").Name("echo") },
			enc{}.str16("sess-tc").str16("echo").i32(-1).i64(0),
			text("sess-tc"), text("echo"), int32(-1), int64(0)),
		toolsCall.cases("null and empty strings, contentLength default",
			func(b *mcp.McpToolsCallBeginExBuilder) { b.SessionIDNull().NameBytes(nil).Timeout(-7) },
			enc{}.null16().str16("").i32(-1).i64(-7),
			null, text(""), int32(-1), int64(-7)),
		promptsList.cases("all set",
			func(b *mcp.McpPromptsListBeginExBuilder) { b.SessionID("sess-prompts-list").Timeout(1234) },
			enc{}.str16("sess-prompts-list").i64(1234),
			text("sess-prompts-list"), int64(1234)),
		promptsList.cases("timeout default",
			func(b *mcp.McpPromptsListBeginExBuilder) { b.SessionID("sess-pl") },
			enc{}.str16("sess-pl").i64(0),
			text("sess-pl"), int64(0)),
		promptsGet.cases("all set",
			func(b *mcp.McpPromptsGetBeginExBuilder) {
				b.SessionID("sess-prompts-get").Name("code_review").ContentLength(2048).Timeout(60000)
			},
			enc{}.str16("sess-prompts-get").str16("code_review").i32(2048).i64(60000),
			text("sess-prompts-get"), text("code_review"), int32(2048), int64(60000)),
		promptsGet.cases("defaults",
			func(b *mcp.McpPromptsGetBeginExBuilder) { b.SessionID("sess-pg").Name("summarize") },
			enc{}.str16("sess-pg").str16("summarize").i32(-1).i64(0),
			text("sess-pg"), text("summarize"), int32(-1), int64(0)),
		resourcesList.cases("all set",
			func(b *mcp.McpResourcesListBeginExBuilder) { b.SessionID("sess-resources-list").Timeout(99) },
			enc{}.str16("sess-resources-list").i64(99),
			text("sess-resources-list"), int64(99)),
		resourcesList.cases("timeout default",
			func(b *mcp.McpResourcesListBeginExBuilder) { b.SessionID("sess-rl") },
			enc{}.str16("sess-rl").i64(0),
			text("sess-rl"), int64(0)),
		resourcesRead.cases("all set",
			func(b *mcp.McpResourcesReadBeginExBuilder) {
				b.SessionID("sess-resources-read").URI("file:///var/log/app.log").ContentLength(4096).Timeout(1000)
			},
			enc{}.str16("sess-resources-read").str16("file:///var/log/app.log").i32(4096).i64(1000),
			text("sess-resources-read"), text("file:///var/log/app.log"), int32(4096), int64(1000)),
		resourcesRead.cases("defaults",
			func(b *mcp.McpResourcesReadBeginExBuilder) { b.SessionID("sess-rr").URI("file:///a") },
			enc{}.str16("sess-rr").str16("file:///a").i32(-1).i64(0),
			text("sess-rr"), text("file:///a"), int32(-1), int64(0)),
		resourcesTemplatesList.cases("all set",
			func(b *mcp.McpResourcesTemplatesListBeginExBuilder) {
				b.SessionID("sess-resources-templates-list").Timeout(1 << 40)
			},
			enc{}.str16("sess-resources-templates-list").i64(1<<40),
			text("sess-resources-templates-list"), int64(1<<40)),
		resourcesTemplatesList.cases("timeout default",
			func(b *mcp.McpResourcesTemplatesListBeginExBuilder) { b.SessionID("sess-rtl") },
			enc{}.str16("sess-rtl").i64(0),
			text("sess-rtl"), int64(0)),
		resourcesSubscribe.cases("all set",
			func(b *mcp.McpResourcesSubscribeBeginExBuilder) {
				b.SessionID("sess-resources-subscribe").URI("file:///etc/motd").ContentLength(7).Timeout(8)
			},
			enc{}.str16("sess-resources-subscribe").str16("file:///etc/motd").i32(7).i64(8),
			text("sess-resources-subscribe"), text("file:///etc/motd"), int32(7), int64(8)),
		resourcesSubscribe.cases("defaults",
			func(b *mcp.McpResourcesSubscribeBeginExBuilder) { b.SessionID("sess-rs").URI("file:///b") },
			enc{}.str16("sess-rs").str16("file:///b").i32(-1).i64(0),
			text("sess-rs"), text("file:///b"), int32(-1), int64(0)),
		resourcesUnsubscribe.cases("all set",
			func(b *mcp.McpResourcesUnsubscribeBeginExBuilder) {
				b.SessionID("sess-resources-unsubscribe").URI("file:///etc/hosts").ContentLength(-2).Timeout(-3)
			},
			enc{}.str16("sess-resources-unsubscribe").str16("file:///etc/hosts").i32(-2).i64(-3),
			text("sess-resources-unsubscribe"), text("file:///etc/hosts"), int32(-2), int64(-3)),
		resourcesUnsubscribe.cases("defaults",
			func(b *mcp.McpResourcesUnsubscribeBeginExBuilder) { b.SessionID("sess-ru").URI("file:///c") },
			enc{}.str16("sess-ru").str16("file:///c").i32(-1).i64(0),
			text("sess-ru"), text("file:///c"), int32(-1), int64(0)),

		// McpFlushEx
		resumable.cases("all set",
			func(b *mcp.McpResumableFlushExBuilder) { b.ID("evt-0001") },
			enc{}.str16("evt-0001"), text("evt-0001")),
		resumable.cases("id default",
			nil,
			enc{}.null16(), null),
		resumable.cases("explicit null",
			func(b *mcp.McpResumableFlushExBuilder) { b.IDNull() },
			enc{}.null16(), null),
		toolsListChanged.cases("all set",
			func(b *mcp.McpToolsListChangedFlushExBuilder) { b.ID("evt-tools") },
			enc{}.str16("evt-tools"), text("evt-tools")),
		toolsListChanged.cases("id default",
			nil,
			enc{}.null16(), null),
		promptsListChanged.cases("all set",
			func(b *mcp.McpPromptsListChangedFlushExBuilder) { b.IDBytes([]byte("evt-prompts")) },
			enc{}.str16("evt-prompts"), text("evt-prompts")),
		promptsListChanged.cases("id default",
			nil,
			enc{}.null16(), null),
		resourcesListChanged.cases("all set",
			func(b *mcp.McpResourcesListChangedFlushExBuilder) { b.ID("evt-resources") },
			enc{}.str16("evt-resources"), text("evt-resources")),
		resourcesListChanged.cases("id default",
			nil,
			enc{}.null16(), null),
		progress.cases("all set",
			func(b *mcp.McpProgressFlushExBuilder) {
				b.ID("req-7").Token("tok-3").Progress(50).Total(200).Message("halfway there")
			},
			enc{}.str16("req-7").str16("tok-3").i64(50).i64(200).str16("halfway there"),
			text("req-7"), text("tok-3"), int64(50), int64(200), text("halfway there")),
		progress.cases("defaults",
			func(b *mcp.McpProgressFlushExBuilder) { b.ID("req-8").Token("tok-4").Progress(1) },
			enc{}.str16("req-8").str16("tok-4").i64(1).i64(-1).null16(),
			text("req-8"), text("tok-4"), int64(1), int64(-1), null),
		progress.cases("explicit nulls, total default",
			func(b *mcp.McpProgressFlushExBuilder) { b.IDNull().TokenNull().Progress(-1).MessageNull() },
			enc{}.null16().null16().i64(-1).i64(-1).null16(),
			null, null, int64(-1), int64(-1), null),
		suspend.cases("all set",
			func(b *mcp.McpSuspendFlushExBuilder) { b.Retry(2500) },
			enc{}.i64(2500), int64(2500)),
		suspend.cases("retry default",
			nil,
			enc{}.i64(0), int64(0)),
		elicitCallback.cases("all set",
			func(b *mcp.McpElicitCallbackFlushExBuilder) {
				b.URL("https://elicit.example/form/9").CorrelationID("corr-9")
			},
			enc{}.str16("https://elicit.example/form/9").str16("corr-9"),
			text("https://elicit.example/form/9"), text("corr-9")),
		elicitCallback.cases("correlationId default",
			func(b *mcp.McpElicitCallbackFlushExBuilder) { b.URL("https://e.example") },
			enc{}.str16("https://e.example").null16(),
			text("https://e.example"), null),
		elicitComplete.cases("all set",
			func(b *mcp.McpElicitCompleteFlushExBuilder) { b.ID("elicit-5") },
			enc{}.str16("elicit-5"), text("elicit-5")),
		elicitComplete.cases("explicit null",
			func(b *mcp.McpElicitCompleteFlushExBuilder) { b.IDNull() },
			enc{}.null16(), null),
		elicitResponse.cases("all set",
			func(b *mcp.McpElicitResponseFlushExBuilder) {
				b.CorrelationID("corr-2").Action(mcp.McpElicitActionDecline)
			},
			enc{}.str16("corr-2").u8(1),
			text("corr-2"), mcp.McpElicitActionDecline),
		elicitResponse.cases("null correlationId, cancel",
			func(b *mcp.McpElicitResponseFlushExBuilder) { b.CorrelationIDNull().Action(mcp.McpElicitActionCancel) },
			enc{}.null16().u8(2),
			null, mcp.McpElicitActionCancel),
		resourcesUpdated.cases("all set",
			func(b *mcp.McpResourcesUpdatedFlushExBuilder) { b.ID("upd-3").URI("file:///etc/motd") },
			enc{}.str16("upd-3").str16("file:///etc/motd"),
			text("upd-3"), text("file:///etc/motd")),
		resourcesUpdated.cases("id default",
			func(b *mcp.McpResourcesUpdatedFlushExBuilder) { b.URI("file:///x") },
			enc{}.null16().str16("file:///x"),
			null, text("file:///x")),

		// McpChallengeEx
		resume.cases("all set",
			func(b *mcp.McpResumeChallengeExBuilder) { b.ID("resume-1") },
			enc{}.str16("resume-1"), text("resume-1")),
		resume.cases("id default",
			nil,
			enc{}.null16(), null),
		suspended.cases("empty",
			nil,
			enc{}),
		elicitCreate.cases("all set",
			func(b *mcp.McpElicitCreateChallengeExBuilder) {
				b.ID("el-1").URL("https://e.example/1").Message("Please confirm").CorrelationID("corr-1")
			},
			enc{}.str16("el-1").str16("https://e.example/1").str16("Please confirm").str16("corr-1"),
			text("el-1"), text("https://e.example/1"), text("Please confirm"), text("corr-1")),
		elicitCreate.cases("defaults",
			func(b *mcp.McpElicitCreateChallengeExBuilder) { b.ID("el-2").URL("https://e.example/2") },
			enc{}.str16("el-2").str16("https://e.example/2").null16().null16(),
			text("el-2"), text("https://e.example/2"), null, null),
		elicitCreate.cases("message default, correlationId set",
			func(b *mcp.McpElicitCreateChallengeExBuilder) {
				b.ID("el-3").URL("https://e.example/3").CorrelationID("corr-3")
			},
			enc{}.str16("el-3").str16("https://e.example/3").null16().str16("corr-3"),
			text("el-3"), text("https://e.example/3"), null, text("corr-3")),

		// McpResetEx
		bearer.cases("all set",
			func(b *mcp.McpBearerResetExBuilder) {
				b.Realm("mcp").Scopes("tools:read tools:call").
					ResourceMetadata("https://rs.example/.well-known/oauth-protected-resource").
					Error(mcp.McpBearerErrorInsufficientScope)
			},
			enc{}.str16("mcp").str16("tools:read tools:call").
				str16("https://rs.example/.well-known/oauth-protected-resource").u8(2),
			text("mcp"), text("tools:read tools:call"),
			text("https://rs.example/.well-known/oauth-protected-resource"), mcp.McpBearerErrorInsufficientScope),
		bearer.cases("defaults",
			func(b *mcp.McpBearerResetExBuilder) { b.Error(mcp.McpBearerErrorInvalidToken) },
			enc{}.null16().null16().null16().u8(1),
			null, null, null, mcp.McpBearerErrorInvalidToken),
		bearer.cases("realm set, the rest default",
			func(b *mcp.McpBearerResetExBuilder) { b.Realm("r").Error(mcp.McpBearerErrorInvalidRequest) },
			enc{}.str16("r").null16().null16().u8(0),
			text("r"), null, null, mcp.McpBearerErrorInvalidRequest),
		errorReset.cases("all set",
			func(b *mcp.McpErrorResetExBuilder) { b.Code(-32601).Message("Method not found") },
			enc{}.i32(-32601).str16("Method not found"),
			int32(-32601), text("Method not found")),
		errorReset.cases("message default",
			func(b *mcp.McpErrorResetExBuilder) { b.Code(-32603) },
			enc{}.i32(-32603).null16(),
			int32(-32603), null),

		// McpEventEx
		sessionEstablished.cases("all set",
			func(b *mcp.McpSessionEstablishedExBuilder) { b.SessionID("sess-ev1") },
			enc{}.str16("sess-ev1"), text("sess-ev1")),
		sessionClosed.cases("all set",
			func(b *mcp.McpSessionClosedExBuilder) { b.SessionID("sess-ev2").Reason("idle timeout") },
			enc{}.str16("sess-ev2").str16("idle timeout"),
			text("sess-ev2"), text("idle timeout")),
		sessionClosed.cases("reason default",
			func(b *mcp.McpSessionClosedExBuilder) { b.SessionID("sess-ev3") },
			enc{}.str16("sess-ev3").null16(),
			text("sess-ev3"), null),
		authorizationFailed.cases("all set",
			func(b *mcp.McpAuthorizationFailedExBuilder) {
				b.Realm("mcp").Scopes("admin").ResourceMetadata("https://rs.example/meta").
					Error(mcp.McpBearerErrorInvalidToken)
			},
			enc{}.str16("mcp").str16("admin").str16("https://rs.example/meta").u8(1),
			text("mcp"), text("admin"), text("https://rs.example/meta"), mcp.McpBearerErrorInvalidToken),
		authorizationFailed.cases("defaults",
			func(b *mcp.McpAuthorizationFailedExBuilder) { b.Error(mcp.McpBearerErrorInsufficientScope) },
			enc{}.null16().null16().null16().u8(2),
			null, null, null, mcp.McpBearerErrorInsufficientScope),
		elicitationTimeout.cases("all set",
			func(b *mcp.McpElicitationTimeoutExBuilder) { b.SessionID("sess-ev4").ElicitationID("elicit-77") },
			enc{}.str16("sess-ev4").str16("elicit-77"),
			text("sess-ev4"), text("elicit-77")),

		[]structCase{
			abort.scenario("all set",
				func(b *mcp.McpAbortExBuilder) { b.CompositeID(cid).TypeID(tid).Reason("client went away") },
				enc{}.ext(cid, tid).str16("client went away"),
				cid, tid, text("client went away")),
			abort.scenario("defaults",
				func(b *mcp.McpAbortExBuilder) { b.TypeID(tid) },
				enc{}.ext(0, tid).null16(),
				int64(0), tid, null),
			abort.scenario("explicit null reason",
				func(b *mcp.McpAbortExBuilder) { b.CompositeID(-1).TypeID(-1).ReasonNull() },
				enc{}.ext(-1, -1).null16(),
				int64(-1), int32(-1), null),
			end.scenario("all set",
				func(b *mcp.McpEndExBuilder) { b.CompositeID(cid).TypeID(tid).Outcome(mcp.McpOutcomeError) },
				enc{}.ext(cid, tid).u8(1),
				cid, tid, mcp.McpOutcomeError),
			end.scenario("defaults",
				func(b *mcp.McpEndExBuilder) { b.TypeID(tid) },
				enc{}.ext(0, tid).u8(0),
				int64(0), tid, mcp.McpOutcomeOk),
		},
	)
	return cases
}

func filled(n int, b byte) []byte {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = b
	}
	return buf
}

// assertUntouched checks that the builder left b as filled.
func assertUntouched(t *testing.T, b []byte, what string) {
	t.Helper()
	for i, c := range b {
		if c != sentinel {
			assert.Failf(t, "builder wrote outside its value", "%s: byte %d is %#x", what, i, c)
			return
		}
	}
}

// checkRoundTrip builds c at buf[off:], compares the bytes with c.body, and
// reads them back with Build's view, a fresh reader, and a fresh reader over
// the hand-encoded body.
func checkRoundTrip(t *testing.T, c structCase, off int) {
	t.Helper()
	const pad = 16
	buf := filled(off+len(c.body)+pad, sentinel)
	limit, got, err := c.build(buf, off, len(buf))
	require.NoError(t, err, "Build")
	assert.Equal(t, c.want, got, "getters of the view Build returned")
	require.GreaterOrEqual(t, limit, off, "Build's view ends before it starts")
	assert.Equal(t, off+len(c.body), limit, "Build's view Limit()")
	assert.Equal(t, []byte(c.body), buf[off:limit], "encoding")
	assertUntouched(t, buf[:off], "before the value")
	assertUntouched(t, buf[limit:], "after the value")

	buf2 := filled(len(buf), sentinel)
	limit2, builderLimit, err := c.buildLimit(buf2, off, len(buf2))
	require.NoError(t, err, "BuildLimit")
	assert.Equal(t, limit, limit2, "BuildLimit")
	assert.Equal(t, limit, builderLimit, "builder Limit() after BuildLimit")
	assert.Equal(t, buf, buf2, "Build and BuildLimit write the same bytes")

	sp, got, err := c.wrap(buf, off, limit)
	require.NoError(t, err, "Wrap of the built bytes")
	assert.Equal(t, c.want, got, "getters of a fresh reader")
	assert.Equal(t, span{off: off, limit: limit, size: limit - off, sameBuf: true, try: true}, sp)
	assert.Equal(t, sp.off+sp.size, sp.limit, "Limit() == Offset() + Sizeof()")

	sp, _, err = c.wrap(buf, off, len(buf))
	require.NoError(t, err, "Wrap with bytes after the value")
	assert.Equal(t, limit, sp.limit, "bytes after the value are not part of it")

	hand := enc(filled(off, 0x5a)).add(c.body...)
	sp, got, err = c.wrap(hand, off, len(hand))
	require.NoError(t, err, "Wrap of the hand-encoded bytes")
	assert.Equal(t, c.want, got, "getters over the hand-encoded bytes")
	assert.Equal(t, len(hand), sp.limit, "Limit() over the hand-encoded bytes")
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range mcpCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, off := range []int{0, 7} {
				t.Run(fmt.Sprintf("offset %d", off), func(t *testing.T) {
					checkRoundTrip(t, tc, off)
				})
			}
		})
	}
}

// TestEveryUnionCaseCovered guards mcpCases against a case added to the IDL
// but not to the table.
func TestEveryUnionCaseCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range mcpCases() {
		seen[tc.typ] = true
	}
	for _, typ := range []string{
		"McpBeginEx", "McpFlushEx", "McpChallengeEx", "McpResetEx", "McpEventEx", "McpAbortEx", "McpEndEx",
		"McpLifecycleBeginEx", "McpToolsListBeginEx", "McpToolsCallBeginEx", "McpPromptsListBeginEx",
		"McpPromptsGetBeginEx", "McpResourcesListBeginEx", "McpResourcesReadBeginEx",
		"McpResourcesTemplatesListBeginEx", "McpResourcesSubscribeBeginEx", "McpResourcesUnsubscribeBeginEx",
		"McpResumableFlushEx", "McpToolsListChangedFlushEx", "McpPromptsListChangedFlushEx",
		"McpResourcesListChangedFlushEx", "McpProgressFlushEx", "McpSuspendFlushEx", "McpElicitCallbackFlushEx",
		"McpElicitCompleteFlushEx", "McpElicitResponseFlushEx", "McpResourcesUpdatedFlushEx",
		"McpResumeChallengeEx", "McpSuspendedChallengeEx", "McpElicitCreateChallengeEx",
		"McpBearerResetEx", "McpErrorResetEx",
		"McpSessionEstablishedEx", "McpSessionClosedEx", "McpAuthorizationFailedEx", "McpElicitationTimeoutEx",
	} {
		assert.True(t, seen[typ], typ)
	}
	// union scenarios are named Union/case/scenario and want compositeId,
	// typeId, kind, ...
	kinds := map[string]map[uint8]bool{}
	for _, tc := range mcpCases() {
		if strings.Count(tc.name, "/") != 2 {
			continue
		}
		if kinds[tc.typ] == nil {
			kinds[tc.typ] = map[uint8]bool{}
		}
		kinds[tc.typ][uint8(reflect.ValueOf(tc.want[2]).Uint())] = true
	}
	counts := map[string]int{}
	for typ, ks := range kinds {
		counts[typ] = len(ks)
	}
	assert.Equal(t, map[string]int{"McpBeginEx": 10, "McpFlushEx": 10, "McpChallengeEx": 3, "McpResetEx": 2, "McpEventEx": 4}, counts,
		"union cases covered")
}

// TestEncodingMcpBeginExToolsCall pins the wire format byte for byte.
func TestEncodingMcpBeginExToolsCall(t *testing.T) {
	want := []byte{
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // compositeId
		0x0d, 0x0c, 0x0b, 0x0a, // typeId
		0x02,                           // kind: toolsCall
		0x04, 0x00, 's', '-', '4', '2', // sessionId, string16
		0x04, 0x00, 'e', 'c', 'h', 'o', // name, string16
		0xff, 0xff, 0xff, 0xff, // contentLength: default -1
		0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // timeout: 1000
	}
	buf := make([]byte, 64)
	var b mcp.McpBeginExBuilder
	b.Wrap(buf, 0, len(buf)).CompositeID(cid).TypeID(tid).ToolsCall().SessionID("s-42").Name("echo").Timeout(1000)
	v, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, want, buf[:v.Limit()])

	var r mcp.McpBeginEx
	require.NoError(t, r.Wrap(want, 0, len(want)))
	assert.Equal(t, len(want), r.Limit())
	assert.Equal(t, mcp.McpBeginExKindToolsCall, r.Kind())
	tc := r.ToolsCall()
	assert.Equal(t, []any{text("s-42"), text("echo"), int32(-1), int64(1000)}, readNamedCall(&tc))
}

// TestEncodingMcpBeginExLifecycleNulls pins null strings (length -1).
func TestEncodingMcpBeginExLifecycleNulls(t *testing.T) {
	want := []byte{
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // compositeId: default 0
		0x01, 0x00, 0x00, 0x00, // typeId
		0x00,       // kind: lifecycle
		0xff, 0xff, // sessionId: null
		0x01, 0x01, // capabilities: SERVER_TOOLS | CLIENT_ELICITATION
		0xff, 0xff, // authCallback: null
	}
	buf := make([]byte, 64)
	var b mcp.McpBeginExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(1).Lifecycle().SessionIDNull().
		Capabilities(uint16(mcp.McpCapabilitiesServerTools | mcp.McpCapabilitiesClientElicitation))
	v, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, want, buf[:v.Limit()])
}

func TestWrapTruncated(t *testing.T) {
	for _, tc := range mcpCases() {
		t.Run(tc.name, func(t *testing.T) {
			full := []byte(tc.body)
			for k := 0; k < len(full); k++ {
				for _, buf := range [][]byte{full[:k:k], full} {
					sp, _, err := tc.wrap(buf, 0, k)
					require.Errorf(t, err, "Wrap of %d of %d bytes", k, len(full))
					assert.ErrorIsf(t, err, flyweight.ErrShort, "Wrap of %d of %d bytes", k, len(full))
					assert.Falsef(t, sp.try, "TryWrap of %d of %d bytes", k, len(full))
					var fe *flyweight.Error
					if assert.ErrorAs(t, err, &fe) {
						assert.Equal(t, tc.typ, fe.Type)
						assert.NotEmpty(t, fe.Field, "the field in which the buffer ends")
					}
				}
			}
		})
	}
}

func TestBuildOverflow(t *testing.T) {
	for _, tc := range mcpCases() {
		t.Run(tc.name, func(t *testing.T) {
			const off = 3
			for k := 0; k < len(tc.body); k++ {
				buf := filled(off+len(tc.body)+8, sentinel)
				_, _, err := tc.build(buf, off, off+k)
				require.Errorf(t, err, "Build with room for %d of %d bytes", k, len(tc.body))
				assert.ErrorIsf(t, err, flyweight.ErrOverflow, "Build with room for %d of %d bytes", k, len(tc.body))
				assertUntouched(t, buf[:off], "before the value")
				assertUntouched(t, buf[off+k:], fmt.Sprintf("past maxLimit %d", off+k))
			}
		})
	}
}

// TestUnionCompositeIDDefault checks that every union fills the default 0
// of a skipped compositeId.
func TestUnionCompositeIDDefault(t *testing.T) {
	tests := []struct {
		name  string
		build func(buf []byte) (int, error)
		want  enc
	}{
		{name: "McpBeginEx", build: func(buf []byte) (int, error) {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).ToolsList().SessionID("s")
			return b.BuildLimit()
		}, want: enc{}.ext(0, tid).u8(1).str16("s").i64(0)},
		{name: "McpFlushEx", build: func(buf []byte) (int, error) {
			var b mcp.McpFlushExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).Suspend().Retry(3)
			return b.BuildLimit()
		}, want: enc{}.ext(0, tid).u8(5).i64(3)},
		{name: "McpChallengeEx", build: func(buf []byte) (int, error) {
			var b mcp.McpChallengeExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).Suspended()
			return b.BuildLimit()
		}, want: enc{}.ext(0, tid).u8(1)},
		{name: "McpResetEx", build: func(buf []byte) (int, error) {
			var b mcp.McpResetExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).Error().Code(7).Message("m")
			return b.BuildLimit()
		}, want: enc{}.ext(0, tid).u8(1).i32(7).str16("m")},
		{name: "McpEventEx", build: func(buf []byte) (int, error) {
			var b mcp.McpEventExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).SessionEstablished().SessionID("s")
			return b.BuildLimit()
		}, want: enc{}.ext(0, tid).u8(1).str16("s")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := filled(64, sentinel)
			limit, err := tc.build(buf)
			require.NoError(t, err)
			assert.Equal(t, []byte(tc.want), buf[:limit])
		})
	}
}

// wrapAs wraps a fresh V over all of buf.
func wrapAs[V any, PV reader[V]](buf []byte) error {
	var v V
	return PV(&v).Wrap(buf, 0, len(buf))
}

func TestWrapErrors(t *testing.T) {
	call := enc{}.str16("n").i32(-1).i64(0)
	tests := []struct {
		name  string
		wrap  func([]byte) error
		buf   enc
		want  error
		typ   string
		field string
	}{
		{name: "McpBeginEx kind 10", wrap: wrapAs[mcp.McpBeginEx],
			buf: enc{}.ext(cid, tid).u8(10).str16("s").i64(0), want: flyweight.ErrKind, typ: "McpBeginEx", field: "kind"},
		{name: "McpBeginEx kind 255", wrap: wrapAs[mcp.McpBeginEx],
			buf: enc{}.ext(cid, tid).u8(255), want: flyweight.ErrKind, typ: "McpBeginEx", field: "kind"},
		{name: "McpFlushEx kind 10", wrap: wrapAs[mcp.McpFlushEx],
			buf: enc{}.ext(cid, tid).u8(10).null16(), want: flyweight.ErrKind, typ: "McpFlushEx", field: "kind"},
		{name: "McpChallengeEx kind 3", wrap: wrapAs[mcp.McpChallengeEx],
			buf: enc{}.ext(cid, tid).u8(3).null16(), want: flyweight.ErrKind, typ: "McpChallengeEx", field: "kind"},
		{name: "McpResetEx kind 2", wrap: wrapAs[mcp.McpResetEx],
			buf: enc{}.ext(cid, tid).u8(2).i32(0).null16(), want: flyweight.ErrKind, typ: "McpResetEx", field: "kind"},
		{name: "McpEventEx kind 0", wrap: wrapAs[mcp.McpEventEx],
			buf: enc{}.ext(cid, tid).u8(0).str16("s"), want: flyweight.ErrKind, typ: "McpEventEx", field: "kind"},
		{name: "McpEventEx kind 5", wrap: wrapAs[mcp.McpEventEx],
			buf: enc{}.ext(cid, tid).u8(5).str16("s"), want: flyweight.ErrKind, typ: "McpEventEx", field: "kind"},
		{name: "sessionId length -2", wrap: wrapAs[mcp.McpToolsCallBeginEx],
			buf: enc{}.u16(0xfffe).add(call...), want: flyweight.ErrLength, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "sessionId length -32768", wrap: wrapAs[mcp.McpToolsCallBeginEx],
			buf: enc{}.u16(0x8000).add(call...), want: flyweight.ErrLength, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "name length -2", wrap: wrapAs[mcp.McpToolsCallBeginEx],
			buf: enc{}.str16("s").u16(0xfffe).i32(-1).i64(0), want: flyweight.ErrLength, typ: "McpToolsCallBeginEx", field: "name"},
		{name: "sessionId length -2 through the union", wrap: wrapAs[mcp.McpBeginEx],
			buf: enc{}.ext(cid, tid).u8(2).u16(0xfffe).add(call...), want: flyweight.ErrLength, typ: "McpBeginEx", field: "toolsCall"},
		{name: "authCallback length -2", wrap: wrapAs[mcp.McpLifecycleBeginEx],
			buf: enc{}.null16().u16(1).u16(0xfffe), want: flyweight.ErrLength, typ: "McpLifecycleBeginEx", field: "authCallback"},
		{name: "reason length -2", wrap: wrapAs[mcp.McpAbortEx],
			buf: enc{}.ext(cid, tid).u16(0xfffe), want: flyweight.ErrLength, typ: "McpAbortEx", field: "reason"},
		{name: "sessionId longer than the buffer", wrap: wrapAs[mcp.McpToolsCallBeginEx],
			buf: enc{}.u16(100).add([]byte("abc")...), want: flyweight.ErrShort, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "sessionId length max int16", wrap: wrapAs[mcp.McpBeginEx],
			buf: enc{}.ext(cid, tid).u8(1).u16(0x7fff).i64(0), want: flyweight.ErrShort, typ: "McpBeginEx", field: "toolsList"},
		{name: "string length covers the fields after it", wrap: wrapAs[mcp.McpToolsCallBeginEx],
			buf: enc{}.u16(uint16(len(call))).add(call...), want: flyweight.ErrShort, typ: "McpToolsCallBeginEx", field: "name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.wrap(tc.buf)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.typ, fe.Type)
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, err.Error(), tc.typ+"."+tc.field)
		})
	}
}

func TestWrapBounds(t *testing.T) {
	buf := enc{}.ext(cid, tid).u8(1).str16("s").i64(0)
	tests := []struct {
		name       string
		off, limit int
	}{
		{name: "negative offset", off: -1, limit: len(buf)},
		{name: "offset past limit", off: 3, limit: 2},
		{name: "limit past the buffer", off: 0, limit: len(buf) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v mcp.McpBeginEx
			assert.ErrorIs(t, v.Wrap(buf, tc.off, tc.limit), flyweight.ErrBounds)
			assert.False(t, v.TryWrap(buf, tc.off, tc.limit))
			var s mcp.McpToolsListBeginEx
			assert.ErrorIs(t, s.Wrap(buf, tc.off, tc.limit), flyweight.ErrBounds)
		})
	}
}

func TestBuildErrors(t *testing.T) {
	errCustom := errors.New("custom")
	tests := []struct {
		name  string
		build func(buf []byte) error
		want  error
		typ   string // "" when the error is not a *flyweight.Error
		field string
	}{
		{name: "toolsCall without name", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpToolsCallBeginEx", field: "name"},
		{name: "toolsCall without name, timeout set", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Timeout(5).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpToolsCallBeginEx", field: "name"},
		{name: "toolsCall without name, through the union", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).ToolsCall().SessionID("s")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpToolsCallBeginEx", field: "name"},
		{name: "toolsCall without sessionId", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "union without typeId", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpBeginEx", field: "typeId"},
		{name: "union without a case", build: func(buf []byte) error {
			var b mcp.McpFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpFlushEx", field: "kind"},
		{name: "progress without progress", build: func(buf []byte) error {
			var b mcp.McpProgressFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).ID("i").Token("t").Total(5).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpProgressFlushEx", field: "progress"},
		{name: "elicitResponse without action", build: func(buf []byte) error {
			var b mcp.McpElicitResponseFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).CorrelationID("c").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpElicitResponseFlushEx", field: "action"},
		{name: "bearer without error", build: func(buf []byte) error {
			var b mcp.McpBearerResetExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Realm("r").Scopes("s").ResourceMetadata("m").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpBearerResetEx", field: "error"},
		{name: "bearer with nothing set", build: func(buf []byte) error {
			var b mcp.McpBearerResetExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpBearerResetEx", field: "error"},
		{name: "resourcesUpdated without uri, id set", build: func(buf []byte) error {
			var b mcp.McpResourcesUpdatedFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).ID("i").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpResourcesUpdatedFlushEx", field: "uri"},
		{name: "resourcesUpdated with nothing set", build: func(buf []byte) error {
			var b mcp.McpResourcesUpdatedFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpResourcesUpdatedFlushEx", field: "uri"},
		{name: "resourcesUpdated with nothing set, BuildLimit", build: func(buf []byte) error {
			var b mcp.McpResourcesUpdatedFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).BuildLimit()
			return err
		}, want: flyweight.ErrMissing, typ: "McpResourcesUpdatedFlushEx", field: "uri"},
		{name: "errorReset without code", build: func(buf []byte) error {
			var b mcp.McpErrorResetExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Message("m").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpErrorResetEx", field: "code"},
		{name: "elicitCreate without url", build: func(buf []byte) error {
			var b mcp.McpElicitCreateChallengeExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).ID("i").Message("m").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpElicitCreateChallengeEx", field: "url"},
		{name: "endEx without typeId", build: func(buf []byte) error {
			var b mcp.McpEndExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Outcome(mcp.McpOutcomeOk).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpEndEx", field: "typeId"},
		{name: "sessionEstablished without sessionId", build: func(buf []byte) error {
			var b mcp.McpEventExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).SessionEstablished()
			_, err := b.Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpSessionEstablishedEx", field: "sessionId"},
		{name: "sessionId after name", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Name("n").SessionID("t").Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "contentLength after timeout", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Name("n").Timeout(1).ContentLength(2).Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpToolsCallBeginEx", field: "contentLength"},
		{name: "name twice", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Name("n").NameNull().Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpToolsCallBeginEx", field: "name"},
		{name: "union compositeId after typeId", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).CompositeID(2).ToolsList().SessionID("s")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpBeginEx", field: "compositeId"},
		{name: "union typeId after the case", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.TypeID(3).Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpBeginEx", field: "typeId"},
		{name: "union second case", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			b.ToolsList().SessionID("s")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpBeginEx", field: "kind"},
		{name: "outcome twice", build: func(buf []byte) error {
			var b mcp.McpEndExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).Outcome(mcp.McpOutcomeOk).Outcome(mcp.McpOutcomeError).Build()
			return err
		}, want: flyweight.ErrOrder, typ: "McpEndEx", field: "outcome"},
		{name: "string too long for string16", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID(strings.Repeat("s", 1<<15)).Name("n").Build()
			return err
		}, want: flyweight.ErrRange, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "bytes too long for string16, through the union", build: func(buf []byte) error {
			var b mcp.McpFlushExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).Resumable().IDBytes(make([]byte, 1<<15))
			_, err := b.Build()
			return err
		}, want: flyweight.ErrRange, typ: "McpResumableFlushEx", field: "id"},
		{name: "tiny buffer", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, 4).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOverflow, typ: "McpBeginEx", field: "compositeId"},
		{name: "no room for the kind", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, 12).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOverflow, typ: "McpBeginEx", field: "kind"},
		{name: "no room for the case", build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, 14).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOverflow, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "offset past maxLimit", build: func(buf []byte) error {
			var b mcp.McpEndExBuilder
			_, err := b.Wrap(buf, 8, 4).TypeID(1).Build()
			return err
		}, want: flyweight.ErrBounds, typ: "McpEndEx"},
		{name: "maxLimit past the buffer", build: func(buf []byte) error {
			var b mcp.McpChallengeExBuilder
			b.Wrap(buf, 0, len(buf)+1).TypeID(1).Suspended()
			_, err := b.Build()
			return err
		}, want: flyweight.ErrBounds, typ: "McpChallengeEx"},
		{name: "errors are sticky", build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").SessionID("s").Name("n").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "McpToolsCallBeginEx", field: "sessionId"},
		{name: "Fail", build: func(buf []byte) error {
			var b mcp.McpAbortExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).Fail(errCustom).Reason("r").Build()
			return err
		}, want: errCustom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.build(make([]byte, 1<<16+64))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			if tc.typ == "" {
				return
			}
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.typ, fe.Type)
			assert.Equal(t, tc.field, fe.Field)
			if tc.field != "" {
				assert.Contains(t, err.Error(), tc.typ+"."+tc.field)
			}
		})
	}
}

func TestLongestString16(t *testing.T) {
	long := strings.Repeat("x", 1<<15-1)
	buf := make([]byte, 1<<16)
	var b mcp.McpToolsCallBeginExBuilder
	v, err := b.Wrap(buf, 0, len(buf)).SessionID(long).Name("n").Build()
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff, 0x7f}, buf[:2])
	assert.Equal(t, long, v.SessionIDString())
	assert.Equal(t, 2+len(long)+2+1+4+8, v.Sizeof())
}

func TestSetInPlace(t *testing.T) {
	tests := []struct {
		name string
		buf  enc
		set  func(t *testing.T, buf []byte)
		want enc
	}{
		{name: "McpBeginEx",
			buf: enc{}.ext(cid, tid).u8(1).str16("s").i64(9),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpBeginEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(-2)
				v.SetTypeID(-3)
			},
			want: enc{}.ext(-2, -3).u8(1).str16("s").i64(9)},
		{name: "McpFlushEx",
			buf: enc{}.ext(cid, tid).u8(5).i64(9),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpFlushEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(4)
				v.SetTypeID(5)
				s := v.Suspend()
				s.SetRetry(6)
			},
			want: enc{}.ext(4, 5).u8(5).i64(6)},
		{name: "McpChallengeEx",
			buf: enc{}.ext(cid, tid).u8(1),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpChallengeEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(7)
				v.SetTypeID(8)
			},
			want: enc{}.ext(7, 8).u8(1)},
		{name: "McpResetEx",
			buf: enc{}.ext(cid, tid).u8(1).i32(-32601).str16("m"),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpResetEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(9)
				v.SetTypeID(10)
				e := v.Error()
				e.SetCode(42)
			},
			want: enc{}.ext(9, 10).u8(1).i32(42).str16("m")},
		{name: "McpEventEx",
			buf: enc{}.ext(cid, tid).u8(1).str16("s"),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpEventEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(11)
				v.SetTypeID(12)
			},
			want: enc{}.ext(11, 12).u8(1).str16("s")},
		{name: "McpAbortEx",
			buf: enc{}.ext(cid, tid).str16("r"),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpAbortEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(13)
				v.SetTypeID(14)
			},
			want: enc{}.ext(13, 14).str16("r")},
		{name: "McpEndEx",
			buf: enc{}.ext(cid, tid).u8(0),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpEndEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(15)
				v.SetTypeID(16)
				v.SetOutcome(mcp.McpOutcomeError)
				assert.Equal(t, mcp.McpOutcomeError, v.Outcome())
			},
			want: enc{}.ext(15, 16).u8(1)},
		{name: "McpSuspendFlushEx",
			buf: enc{}.i64(1),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpSuspendFlushEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetRetry(-1)
			},
			want: enc{}.i64(-1)},
		{name: "McpErrorResetEx",
			buf: enc{}.i32(1).null16(),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpErrorResetEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCode(-1)
			},
			want: enc{}.i32(-1).null16()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := []byte(tc.buf)
			tc.set(t, buf)
			assert.Equal(t, []byte(tc.want), buf)
		})
	}
}

func TestFixedSizes(t *testing.T) {
	assert.Equal(t, 8, mcp.McpSuspendFlushExSize)
	assert.Equal(t, 0, mcp.McpSuspendedChallengeExSize)
	assert.Equal(t, 13, mcp.McpEndExSize)
}

func TestEnumString(t *testing.T) {
	tests := []struct {
		name  string
		v     fmt.Stringer
		want  string
		valid bool
	}{
		{name: "SERVER_TOOLS", v: mcp.McpCapabilitiesServerTools, want: "SERVER_TOOLS", valid: true},
		{name: "SERVER_PROMPTS", v: mcp.McpCapabilitiesServerPrompts, want: "SERVER_PROMPTS", valid: true},
		{name: "SERVER_RESOURCES", v: mcp.McpCapabilitiesServerResources, want: "SERVER_RESOURCES", valid: true},
		{name: "SERVER_TOOLS_LIST_CHANGED", v: mcp.McpCapabilitiesServerToolsListChanged, want: "SERVER_TOOLS_LIST_CHANGED", valid: true},
		{name: "SERVER_PROMPTS_LIST_CHANGED", v: mcp.McpCapabilitiesServerPromptsListChanged, want: "SERVER_PROMPTS_LIST_CHANGED", valid: true},
		{name: "SERVER_RESOURCES_LIST_CHANGED", v: mcp.McpCapabilitiesServerResourcesListChanged, want: "SERVER_RESOURCES_LIST_CHANGED", valid: true},
		{name: "CLIENT_ROOTS", v: mcp.McpCapabilitiesClientRoots, want: "CLIENT_ROOTS", valid: true},
		{name: "CLIENT_SAMPLING", v: mcp.McpCapabilitiesClientSampling, want: "CLIENT_SAMPLING", valid: true},
		{name: "CLIENT_ELICITATION", v: mcp.McpCapabilitiesClientElicitation, want: "CLIENT_ELICITATION", valid: true},
		{name: "CLIENT_ELICITATION_FORM", v: mcp.McpCapabilitiesClientElicitationForm, want: "CLIENT_ELICITATION_FORM", valid: true},
		{name: "CLIENT_ELICITATION_URL", v: mcp.McpCapabilitiesClientElicitationUrl, want: "CLIENT_ELICITATION_URL", valid: true},
		{name: "SERVER_RESOURCES_SUBSCRIBE", v: mcp.McpCapabilitiesServerResourcesSubscribe, want: "SERVER_RESOURCES_SUBSCRIBE", valid: true},
		{name: "capabilities 0", v: mcp.McpCapabilities(0), want: "McpCapabilities(0)"},
		{name: "capabilities combined bits", v: mcp.McpCapabilities(3), want: "McpCapabilities(3)"},
		{name: "capabilities max", v: mcp.McpCapabilities(65535), want: "McpCapabilities(65535)"},
		{name: "ACCEPT", v: mcp.McpElicitActionAccept, want: "ACCEPT", valid: true},
		{name: "DECLINE", v: mcp.McpElicitActionDecline, want: "DECLINE", valid: true},
		{name: "CANCEL", v: mcp.McpElicitActionCancel, want: "CANCEL", valid: true},
		{name: "elicit action 3", v: mcp.McpElicitAction(3), want: "McpElicitAction(3)"},
		{name: "INVALID_REQUEST", v: mcp.McpBearerErrorInvalidRequest, want: "INVALID_REQUEST", valid: true},
		{name: "INVALID_TOKEN", v: mcp.McpBearerErrorInvalidToken, want: "INVALID_TOKEN", valid: true},
		{name: "INSUFFICIENT_SCOPE", v: mcp.McpBearerErrorInsufficientScope, want: "INSUFFICIENT_SCOPE", valid: true},
		{name: "bearer error 255", v: mcp.McpBearerError(255), want: "McpBearerError(255)"},
		{name: "OK", v: mcp.McpOutcomeOk, want: "OK", valid: true},
		{name: "ERROR", v: mcp.McpOutcomeError, want: "ERROR", valid: true},
		{name: "outcome 2", v: mcp.McpOutcome(2), want: "McpOutcome(2)"},
		{name: "SESSION_ESTABLISHED", v: mcp.McpEventTypeSessionEstablished, want: "SESSION_ESTABLISHED", valid: true},
		{name: "SESSION_CLOSED", v: mcp.McpEventTypeSessionClosed, want: "SESSION_CLOSED", valid: true},
		{name: "AUTHORIZATION_FAILED", v: mcp.McpEventTypeAuthorizationFailed, want: "AUTHORIZATION_FAILED", valid: true},
		{name: "ELICITATION_TIMEOUT", v: mcp.McpEventTypeElicitationTimeout, want: "ELICITATION_TIMEOUT", valid: true},
		{name: "event type 0", v: mcp.McpEventType(0), want: "McpEventType(0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.v.String())
			assert.Equal(t, tc.want, fmt.Sprint(tc.v), "fmt uses String")
			assert.Equal(t, tc.valid, tc.v.(interface{ Valid() bool }).Valid(), "Valid")
		})
	}
}

// TestEnumValues pins the IDL values of the enums and union kinds.
func TestEnumValues(t *testing.T) {
	assert.Equal(t, []uint16{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}, []uint16{
		uint16(mcp.McpCapabilitiesServerTools), uint16(mcp.McpCapabilitiesServerPrompts),
		uint16(mcp.McpCapabilitiesServerResources), uint16(mcp.McpCapabilitiesServerToolsListChanged),
		uint16(mcp.McpCapabilitiesServerPromptsListChanged), uint16(mcp.McpCapabilitiesServerResourcesListChanged),
		uint16(mcp.McpCapabilitiesClientRoots), uint16(mcp.McpCapabilitiesClientSampling),
		uint16(mcp.McpCapabilitiesClientElicitation), uint16(mcp.McpCapabilitiesClientElicitationForm),
		uint16(mcp.McpCapabilitiesClientElicitationUrl), uint16(mcp.McpCapabilitiesServerResourcesSubscribe),
	})
	assert.Equal(t, []mcp.McpEventType{1, 2, 3, 4}, []mcp.McpEventType{
		mcp.McpEventExKindSessionEstablished, mcp.McpEventExKindSessionClosed,
		mcp.McpEventExKindAuthorizationFailed, mcp.McpEventExKindElicitationTimeout,
	})
	assert.Equal(t, mcp.McpEventTypeSessionClosed, mcp.McpEventExKindSessionClosed)
}

var sink int

// TestZeroAllocs checks that the hot paths do not allocate: wrapping a
// McpBeginEx and reading its toolsCall strings, and building one into a
// reused buffer with a reused builder.
func TestZeroAllocs(t *testing.T) {
	encoded := []byte(enc{}.ext(cid, tid).u8(mcp.McpBeginExKindToolsCall).str16("sess-1").str16("get_weather").i32(5).i64(6))
	var v mcp.McpBeginEx
	var wrapErr error
	allocs := testing.AllocsPerRun(1000, func() {
		if err := v.Wrap(encoded, 0, len(encoded)); err != nil {
			wrapErr = err
			return
		}
		tc := v.ToolsCall()
		sink += len(tc.SessionID()) + len(tc.Name()) + int(tc.ContentLength()) + int(tc.Timeout())
	})
	require.NoError(t, wrapErr)
	assert.Zero(t, allocs, "allocations per Wrap and read")

	buf := make([]byte, 256)
	var b mcp.McpBeginExBuilder
	var limit int
	var buildErr error
	allocs = testing.AllocsPerRun(1000, func() {
		b.Wrap(buf, 0, len(buf)).CompositeID(cid).TypeID(tid).ToolsCall().
			SessionID("sess-1").Name("get_weather").ContentLength(5).Timeout(6)
		limit, buildErr = b.BuildLimit()
	})
	require.NoError(t, buildErr)
	assert.Zero(t, allocs, "allocations per build")
	assert.Equal(t, encoded, buf[:limit])

	allocs = testing.AllocsPerRun(1000, func() {
		b.Wrap(buf, 0, len(buf)).CompositeID(cid).TypeID(tid).ToolsCall().
			SessionIDBytes(encoded[15:21]).NameBytes(encoded[23:34]).ContentLength(5).Timeout(6)
		_, buildErr = b.Build()
	})
	require.NoError(t, buildErr)
	assert.Zero(t, allocs, "allocations per build with bytes setters and Build")
}

// ---------------------------------------------------------------------------
// Fuzzing.

// beginExSeeds are valid encodings of McpBeginEx, hand-encoded.
func beginExSeeds() [][]byte {
	return [][]byte{
		enc{}.ext(cid, tid).u8(mcp.McpBeginExKindToolsCall).str16("sess-1").str16("get_weather").i32(512).i64(30000),
		enc{}.ext(0, 1).u8(mcp.McpBeginExKindLifecycle).null16().u16(0x0901).null16(),
		enc{}.ext(-1, -1).u8(mcp.McpBeginExKindResourcesRead).str16("").str16("file:///a").i32(-1).i64(0),
		enc{}.ext(2, 3).u8(mcp.McpBeginExKindResourcesTemplatesList).null16().i64(1 << 40),
	}
}

// readBeginExCase reads every getter of the selected case, with where the
// case view lies relative to the union.
func readBeginExCase(u *mcp.McpBeginEx) []any {
	switch u.Kind() {
	case mcp.McpBeginExKindLifecycle:
		return readCase(u, u.Lifecycle(), readLifecycle)
	case mcp.McpBeginExKindToolsList:
		return readCase(u, u.ToolsList(), readSessionTimeout[*mcp.McpToolsListBeginEx])
	case mcp.McpBeginExKindToolsCall:
		return readCase(u, u.ToolsCall(), readNamedCall[*mcp.McpToolsCallBeginEx])
	case mcp.McpBeginExKindPromptsList:
		return readCase(u, u.PromptsList(), readSessionTimeout[*mcp.McpPromptsListBeginEx])
	case mcp.McpBeginExKindPromptsGet:
		return readCase(u, u.PromptsGet(), readNamedCall[*mcp.McpPromptsGetBeginEx])
	case mcp.McpBeginExKindResourcesList:
		return readCase(u, u.ResourcesList(), readSessionTimeout[*mcp.McpResourcesListBeginEx])
	case mcp.McpBeginExKindResourcesRead:
		return readCase(u, u.ResourcesRead(), readURICall[*mcp.McpResourcesReadBeginEx])
	case mcp.McpBeginExKindResourcesTemplatesList:
		return readCase(u, u.ResourcesTemplatesList(), readSessionTimeout[*mcp.McpResourcesTemplatesListBeginEx])
	case mcp.McpBeginExKindResourcesSubscribe:
		return readCase(u, u.ResourcesSubscribe(), readURICall[*mcp.McpResourcesSubscribeBeginEx])
	case mcp.McpBeginExKindResourcesUnsubscribe:
		return readCase(u, u.ResourcesUnsubscribe(), readURICall[*mcp.McpResourcesUnsubscribeBeginEx])
	}
	return nil
}

func readCase[V any, PV reader[V]](u *mcp.McpBeginEx, v V, read func(*V) []any) []any {
	return append([]any{u.CompositeID(), u.TypeID(), PV(&v).Offset() - u.Offset(), u.Limit() - PV(&v).Limit()}, read(&v)...)
}

func FuzzWrapMcpBeginEx(f *testing.F) {
	for _, seed := range beginExSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u mcp.McpBeginEx
		err := u.Wrap(data, 0, len(data))
		var probe mcp.McpBeginEx
		require.Equal(t, err == nil, probe.TryWrap(data, 0, len(data)), "TryWrap agrees with Wrap")
		if err != nil {
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, "McpBeginEx", fe.Type)
			return
		}
		require.LessOrEqual(t, u.Limit(), len(data))
		require.Equal(t, 0, u.Offset())
		require.Equal(t, u.Limit(), u.Sizeof())
		got := readBeginExCase(&u)
		require.NotNil(t, got, "Wrap accepted unknown kind %d", u.Kind())
		require.Equal(t, unionHeader, got[2], "case view offset")
		require.Equal(t, 0, got[3], "case view ends with the union")

		// The same bytes at an offset read the same.
		shifted := append([]byte{0xee, 0xee, 0xee}, data...)
		var s mcp.McpBeginEx
		require.NoError(t, s.Wrap(shifted, 3, len(shifted)))
		require.Equal(t, u.Limit()+3, s.Limit())
		require.Equal(t, u.Kind(), s.Kind())
		require.Equal(t, got, readBeginExCase(&s))
	})
}
