package mcp_test

// Black-box tests of the flyweights generated from idl/mcp.idl. They use only
// the exported API, so a template change that breaks users fails here. The
// round-trip machinery is shared with the other bindings' tests, in
// internal/flyweighttest.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/sluicehq/sluice/internal/flyweighttest"
)

// Short names for what the tables below use most. The expected bytes are
// hand-encoded with enc, little-endian, see idl/mcp.idl.
const cid, tid = flyweighttest.CompositeID, flyweighttest.TypeID

type enc = flyweighttest.Enc

var text, null, strOf = flyweighttest.Text, flyweighttest.Null, flyweighttest.StrOf

// ---------------------------------------------------------------------------
// Decoded values.

type sessionIDer interface {
	HasSessionID() bool
	SessionID() []byte
	SessionIDString() string
}

func sessionID(v sessionIDer) flyweighttest.NStr {
	return strOf(v.HasSessionID(), v.SessionID(), v.SessionIDString())
}

type ider interface {
	HasID() bool
	ID() []byte
	IDString() string
}

func id(v ider) flyweighttest.NStr { return strOf(v.HasID(), v.ID(), v.IDString()) }

// Readers of every case struct: each returns all getter values in IDL order.

func readLifecycle(v *mcp.McpLifecycleBeginEx) []any {
	return []any{sessionID(v), v.Capabilities(), strOf(v.HasAuthCallback(), v.AuthCallback(), v.AuthCallbackString()), v.Subscriptions()}
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

func readRequest(v *mcp.McpRequestBeginEx) []any {
	return []any{sessionID(v), strOf(v.HasMethod(), v.Method(), v.MethodString()), v.ContentLength(), v.Timeout()}
}

func readClientResponse(v *mcp.McpClientResponseBeginEx) []any {
	return []any{sessionID(v), id(v), v.Error(), v.ContentLength()}
}

func readClientRequest(v *mcp.McpClientRequestFlushEx) []any {
	return []any{id(v), strOf(v.HasMethod(), v.Method(), v.MethodString()), strOf(v.HasParams(), v.Params(), v.ParamsString()),
		v.Total(), v.Start()}
}

func readNotification(v *mcp.McpNotificationFlushEx) []any {
	return []any{strOf(v.HasMethod(), v.Method(), v.MethodString()), strOf(v.HasParams(), v.Params(), v.ParamsString()),
		v.Total(), v.Start()}
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
// Round-trip cases.

// unionReader is the API of a union view that extends core::stream::Extension.
type unionReader[U any, K ~uint8] interface {
	flyweighttest.Reader[U]
	CompositeID() int64
	TypeID() int32
	Kind() K
}

// unionHeader is the size of compositeId, typeId and the uint8 kind.
const unionHeader = 13

// caseType describes one case of one union: UB/U are the union's builder and
// view, B/V the case struct's.
type caseType[UB any, PUB flyweighttest.ExtBuilder[UB, U], U any, PU unionReader[U, K], K ~uint8, B any, PB flyweighttest.Builder[B, V], V any, PV flyweighttest.Reader[V]] struct {
	field string
	kind  K
	sel   func(*UB) *B
	get   func(*U) V
	read  func(*V) []any
}

func newCase[UB any, PUB flyweighttest.ExtBuilder[UB, U], U any, PU unionReader[U, K], K ~uint8, B any, PB flyweighttest.Builder[B, V], V any, PV flyweighttest.Reader[V]](
	field string, kind K, sel func(*UB) *B, get func(*U) V, read func(*V) []any,
) caseType[UB, PUB, U, PU, K, B, PB, V, PV] {
	return caseType[UB, PUB, U, PU, K, B, PB, V, PV]{field: field, kind: kind, sel: sel, get: get, read: read}
}

// cases returns the scenario twice: the case struct built on its own, and
// the union built with this case selected.
func (c caseType[UB, PUB, U, PU, K, B, PB, V, PV]) cases(name string, set func(*B), body enc, want ...any) []flyweighttest.Case {
	alone := flyweighttest.Type[B, PB, V, PV]{Read: c.read}.Scenario(name, set, body, want...)
	union := flyweighttest.Type[UB, PUB, U, PU]{Read: func(u *U) []any {
		got := []any{PU(u).CompositeID(), PU(u).TypeID(), PU(u).Kind()}
		if PU(u).Kind() != c.kind {
			return got // the case getter is meaningless for another kind
		}
		v := c.get(u)
		got = append(got, PV(&v).Offset()-PU(u).Offset(), PU(u).Limit()-PV(&v).Limit())
		return append(got, c.read(&v)...)
	}}.Scenario(c.field+"/"+name, func(ub *UB) {
		b := c.sel(PUB(PUB(ub).CompositeID(cid)).TypeID(tid))
		if set != nil {
			set(b)
		}
	},
		enc{}.Ext(cid, tid).U8(uint8(c.kind)).Add(body...),
		// the case view starts after the union header and ends with the union
		append([]any{cid, tid, c.kind, unionHeader, 0}, want...)...)
	return []flyweighttest.Case{alone, union}
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

	request              = newCase("request", mcp.McpBeginExKindRequest, (*mcp.McpBeginExBuilder).Request, (*mcp.McpBeginEx).Request, readRequest)
	clientResponse       = newCase("clientResponse", mcp.McpBeginExKindClientResponse, (*mcp.McpBeginExBuilder).ClientResponse, (*mcp.McpBeginEx).ClientResponse, readClientResponse)
	clientRequest        = newCase("clientRequest", mcp.McpFlushExKindClientRequest, (*mcp.McpFlushExBuilder).ClientRequest, (*mcp.McpFlushEx).ClientRequest, readClientRequest)
	notification         = newCase("notification", mcp.McpFlushExKindNotification, (*mcp.McpFlushExBuilder).Notification, (*mcp.McpFlushEx).Notification, readNotification)
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
func mcpCases() []flyweighttest.Case {
	caps := uint16(mcp.McpCapabilitiesServerTools | mcp.McpCapabilitiesClientElicitation | mcp.McpCapabilitiesServerResourcesSubscribe)
	abort := flyweighttest.Type[mcp.McpAbortExBuilder, *mcp.McpAbortExBuilder, mcp.McpAbortEx, *mcp.McpAbortEx]{Read: readAbortEx}
	end := flyweighttest.Type[mcp.McpEndExBuilder, *mcp.McpEndExBuilder, mcp.McpEndEx, *mcp.McpEndEx]{Read: readEndEx}

	var cases []flyweighttest.Case
	add := func(cs ...[]flyweighttest.Case) {
		for _, c := range cs {
			cases = append(cases, c...)
		}
	}
	add(
		// McpBeginEx
		lifecycle.cases("all set",
			func(b *mcp.McpLifecycleBeginExBuilder) {
				b.SessionID("sess-lifecycle").Capabilities(caps).AuthCallback("https://auth.example/cb").Subscriptions(56)
			},
			enc{}.Str16("sess-lifecycle").U16(caps).Str16("https://auth.example/cb").U16(56),
			text("sess-lifecycle"), caps, text("https://auth.example/cb"), uint16(56)),
		lifecycle.cases("defaults",
			nil,
			enc{}.Null16().U16(0).Null16().U16(0),
			null, uint16(0), null, uint16(0)),
		lifecycle.cases("explicit nulls, capabilities default between them",
			func(b *mcp.McpLifecycleBeginExBuilder) { b.SessionIDNull().AuthCallbackNull() },
			enc{}.Null16().U16(0).Null16().U16(0),
			null, uint16(0), null, uint16(0)),
		lifecycle.cases("only authCallback set",
			func(b *mcp.McpLifecycleBeginExBuilder) { b.AuthCallback("cb") },
			enc{}.Null16().U16(0).Str16("cb").U16(0),
			null, uint16(0), text("cb"), uint16(0)),
		lifecycle.cases("only capabilities set",
			func(b *mcp.McpLifecycleBeginExBuilder) { b.Capabilities(0xfffe) },
			enc{}.Null16().U16(0xfffe).Null16().U16(0),
			null, uint16(0xfffe), null, uint16(0)),
		lifecycle.cases("bytes setters, empty sessionId",
			func(b *mcp.McpLifecycleBeginExBuilder) {
				b.SessionIDBytes([]byte{}).Capabilities(0xffff).AuthCallbackBytes([]byte("cb\x00\xff"))
			},
			enc{}.Str16("").U16(0xffff).Str16("cb\x00\xff").U16(0),
			text(""), uint16(0xffff), text("cb\x00\xff"), uint16(0)),
		toolsList.cases("all set",
			func(b *mcp.McpToolsListBeginExBuilder) { b.SessionID("sess-tools-list").Timeout(45000) },
			enc{}.Str16("sess-tools-list").I64(45000),
			text("sess-tools-list"), int64(45000)),
		toolsList.cases("timeout default",
			func(b *mcp.McpToolsListBeginExBuilder) { b.SessionID("sess-tl") },
			enc{}.Str16("sess-tl").I64(0),
			text("sess-tl"), int64(0)),
		toolsCall.cases("all set",
			func(b *mcp.McpToolsCallBeginExBuilder) {
				b.SessionID("sess-tools-call").Name("get_weather").ContentLength(512).Timeout(30000)
			},
			enc{}.Str16("sess-tools-call").Str16("get_weather").I32(512).I64(30000),
			text("sess-tools-call"), text("get_weather"), int32(512), int64(30000)),
		toolsCall.cases("defaults",
			func(b *mcp.McpToolsCallBeginExBuilder) { b.SessionID("sess-tc").Name("echo") },
			enc{}.Str16("sess-tc").Str16("echo").I32(-1).I64(0),
			text("sess-tc"), text("echo"), int32(-1), int64(0)),
		toolsCall.cases("null and empty strings, contentLength default",
			func(b *mcp.McpToolsCallBeginExBuilder) { b.SessionIDNull().NameBytes(nil).Timeout(-7) },
			enc{}.Null16().Str16("").I32(-1).I64(-7),
			null, text(""), int32(-1), int64(-7)),
		promptsList.cases("all set",
			func(b *mcp.McpPromptsListBeginExBuilder) { b.SessionID("sess-prompts-list").Timeout(1234) },
			enc{}.Str16("sess-prompts-list").I64(1234),
			text("sess-prompts-list"), int64(1234)),
		promptsList.cases("timeout default",
			func(b *mcp.McpPromptsListBeginExBuilder) { b.SessionID("sess-pl") },
			enc{}.Str16("sess-pl").I64(0),
			text("sess-pl"), int64(0)),
		promptsGet.cases("all set",
			func(b *mcp.McpPromptsGetBeginExBuilder) {
				b.SessionID("sess-prompts-get").Name("code_review").ContentLength(2048).Timeout(60000)
			},
			enc{}.Str16("sess-prompts-get").Str16("code_review").I32(2048).I64(60000),
			text("sess-prompts-get"), text("code_review"), int32(2048), int64(60000)),
		promptsGet.cases("defaults",
			func(b *mcp.McpPromptsGetBeginExBuilder) { b.SessionID("sess-pg").Name("summarize") },
			enc{}.Str16("sess-pg").Str16("summarize").I32(-1).I64(0),
			text("sess-pg"), text("summarize"), int32(-1), int64(0)),
		resourcesList.cases("all set",
			func(b *mcp.McpResourcesListBeginExBuilder) { b.SessionID("sess-resources-list").Timeout(99) },
			enc{}.Str16("sess-resources-list").I64(99),
			text("sess-resources-list"), int64(99)),
		resourcesList.cases("timeout default",
			func(b *mcp.McpResourcesListBeginExBuilder) { b.SessionID("sess-rl") },
			enc{}.Str16("sess-rl").I64(0),
			text("sess-rl"), int64(0)),
		resourcesRead.cases("all set",
			func(b *mcp.McpResourcesReadBeginExBuilder) {
				b.SessionID("sess-resources-read").URI("file:///var/log/app.log").ContentLength(4096).Timeout(1000)
			},
			enc{}.Str16("sess-resources-read").Str16("file:///var/log/app.log").I32(4096).I64(1000),
			text("sess-resources-read"), text("file:///var/log/app.log"), int32(4096), int64(1000)),
		resourcesRead.cases("defaults",
			func(b *mcp.McpResourcesReadBeginExBuilder) { b.SessionID("sess-rr").URI("file:///a") },
			enc{}.Str16("sess-rr").Str16("file:///a").I32(-1).I64(0),
			text("sess-rr"), text("file:///a"), int32(-1), int64(0)),
		resourcesTemplatesList.cases("all set",
			func(b *mcp.McpResourcesTemplatesListBeginExBuilder) {
				b.SessionID("sess-resources-templates-list").Timeout(1 << 40)
			},
			enc{}.Str16("sess-resources-templates-list").I64(1<<40),
			text("sess-resources-templates-list"), int64(1<<40)),
		resourcesTemplatesList.cases("timeout default",
			func(b *mcp.McpResourcesTemplatesListBeginExBuilder) { b.SessionID("sess-rtl") },
			enc{}.Str16("sess-rtl").I64(0),
			text("sess-rtl"), int64(0)),
		resourcesSubscribe.cases("all set",
			func(b *mcp.McpResourcesSubscribeBeginExBuilder) {
				b.SessionID("sess-resources-subscribe").URI("file:///etc/motd").ContentLength(7).Timeout(8)
			},
			enc{}.Str16("sess-resources-subscribe").Str16("file:///etc/motd").I32(7).I64(8),
			text("sess-resources-subscribe"), text("file:///etc/motd"), int32(7), int64(8)),
		resourcesSubscribe.cases("defaults",
			func(b *mcp.McpResourcesSubscribeBeginExBuilder) { b.SessionID("sess-rs").URI("file:///b") },
			enc{}.Str16("sess-rs").Str16("file:///b").I32(-1).I64(0),
			text("sess-rs"), text("file:///b"), int32(-1), int64(0)),
		resourcesUnsubscribe.cases("all set",
			func(b *mcp.McpResourcesUnsubscribeBeginExBuilder) {
				b.SessionID("sess-resources-unsubscribe").URI("file:///etc/hosts").ContentLength(-2).Timeout(-3)
			},
			enc{}.Str16("sess-resources-unsubscribe").Str16("file:///etc/hosts").I32(-2).I64(-3),
			text("sess-resources-unsubscribe"), text("file:///etc/hosts"), int32(-2), int64(-3)),
		resourcesUnsubscribe.cases("defaults",
			func(b *mcp.McpResourcesUnsubscribeBeginExBuilder) { b.SessionID("sess-ru").URI("file:///c") },
			enc{}.Str16("sess-ru").Str16("file:///c").I32(-1).I64(0),
			text("sess-ru"), text("file:///c"), int32(-1), int64(0)),

		// McpFlushEx
		resumable.cases("all set",
			func(b *mcp.McpResumableFlushExBuilder) { b.ID("evt-0001") },
			enc{}.Str16("evt-0001"), text("evt-0001")),
		resumable.cases("id default",
			nil,
			enc{}.Null16(), null),
		resumable.cases("explicit null",
			func(b *mcp.McpResumableFlushExBuilder) { b.IDNull() },
			enc{}.Null16(), null),
		toolsListChanged.cases("all set",
			func(b *mcp.McpToolsListChangedFlushExBuilder) { b.ID("evt-tools") },
			enc{}.Str16("evt-tools"), text("evt-tools")),
		toolsListChanged.cases("id default",
			nil,
			enc{}.Null16(), null),
		promptsListChanged.cases("all set",
			func(b *mcp.McpPromptsListChangedFlushExBuilder) { b.IDBytes([]byte("evt-prompts")) },
			enc{}.Str16("evt-prompts"), text("evt-prompts")),
		promptsListChanged.cases("id default",
			nil,
			enc{}.Null16(), null),
		resourcesListChanged.cases("all set",
			func(b *mcp.McpResourcesListChangedFlushExBuilder) { b.ID("evt-resources") },
			enc{}.Str16("evt-resources"), text("evt-resources")),
		resourcesListChanged.cases("id default",
			nil,
			enc{}.Null16(), null),
		progress.cases("all set",
			func(b *mcp.McpProgressFlushExBuilder) {
				b.ID("req-7").Token("tok-3").Progress(50).Total(200).Message("halfway there")
			},
			enc{}.Str16("req-7").Str16("tok-3").I64(50).I64(200).Str16("halfway there"),
			text("req-7"), text("tok-3"), int64(50), int64(200), text("halfway there")),
		progress.cases("defaults",
			func(b *mcp.McpProgressFlushExBuilder) { b.ID("req-8").Token("tok-4").Progress(1) },
			enc{}.Str16("req-8").Str16("tok-4").I64(1).I64(-1).Null16(),
			text("req-8"), text("tok-4"), int64(1), int64(-1), null),
		progress.cases("explicit nulls, total default",
			func(b *mcp.McpProgressFlushExBuilder) { b.IDNull().TokenNull().Progress(-1).MessageNull() },
			enc{}.Null16().Null16().I64(-1).I64(-1).Null16(),
			null, null, int64(-1), int64(-1), null),
		suspend.cases("all set",
			func(b *mcp.McpSuspendFlushExBuilder) { b.Retry(2500) },
			enc{}.I64(2500), int64(2500)),
		suspend.cases("retry default",
			nil,
			enc{}.I64(0), int64(0)),
		elicitCallback.cases("all set",
			func(b *mcp.McpElicitCallbackFlushExBuilder) {
				b.URL("https://elicit.example/form/9").CorrelationID("corr-9")
			},
			enc{}.Str16("https://elicit.example/form/9").Str16("corr-9"),
			text("https://elicit.example/form/9"), text("corr-9")),
		elicitCallback.cases("correlationId default",
			func(b *mcp.McpElicitCallbackFlushExBuilder) { b.URL("https://e.example") },
			enc{}.Str16("https://e.example").Null16(),
			text("https://e.example"), null),
		elicitComplete.cases("all set",
			func(b *mcp.McpElicitCompleteFlushExBuilder) { b.ID("elicit-5") },
			enc{}.Str16("elicit-5"), text("elicit-5")),
		elicitComplete.cases("explicit null",
			func(b *mcp.McpElicitCompleteFlushExBuilder) { b.IDNull() },
			enc{}.Null16(), null),
		elicitResponse.cases("all set",
			func(b *mcp.McpElicitResponseFlushExBuilder) {
				b.CorrelationID("corr-2").Action(mcp.McpElicitActionDecline)
			},
			enc{}.Str16("corr-2").U8(1),
			text("corr-2"), mcp.McpElicitActionDecline),
		elicitResponse.cases("null correlationId, cancel",
			func(b *mcp.McpElicitResponseFlushExBuilder) { b.CorrelationIDNull().Action(mcp.McpElicitActionCancel) },
			enc{}.Null16().U8(2),
			null, mcp.McpElicitActionCancel),
		request.cases("all set",
			func(b *mcp.McpRequestBeginExBuilder) {
				b.SessionID("sess-req").Method("completion/complete").ContentLength(12).Timeout(5000)
			},
			enc{}.Str16("sess-req").Str16("completion/complete").I32(12).I64(5000),
			text("sess-req"), text("completion/complete"), int32(12), int64(5000)),
		request.cases("defaults",
			func(b *mcp.McpRequestBeginExBuilder) { b.SessionIDNull().Method("logging/setLevel") },
			enc{}.Null16().Str16("logging/setLevel").I32(-1).I64(0),
			null, text("logging/setLevel"), int32(-1), int64(0)),
		clientResponse.cases("all set",
			func(b *mcp.McpClientResponseBeginExBuilder) {
				b.SessionID("sess-1").ID(`"a:7"`).Error(1).ContentLength(40)
			},
			enc{}.Str16("sess-1").Str16(`"a:7"`).U8(1).I32(40),
			text("sess-1"), text(`"a:7"`), uint8(1), int32(40)),
		clientResponse.cases("defaults",
			func(b *mcp.McpClientResponseBeginExBuilder) { b.SessionID("sess-1").ID("7") },
			enc{}.Str16("sess-1").Str16("7").U8(0).I32(-1),
			text("sess-1"), text("7"), uint8(0), int32(-1)),
		clientRequest.cases("all set",
			func(b *mcp.McpClientRequestFlushExBuilder) {
				b.ID("3").Method("roots/list").Params(`{}`).Total(2).Start(0)
			},
			enc{}.Str16("3").Str16("roots/list").I32(2).Add([]byte(`{}`)...).I32(2).I32(0),
			text("3"), text("roots/list"), text(`{}`), int32(2), int32(0)),
		clientRequest.cases("params default",
			func(b *mcp.McpClientRequestFlushExBuilder) { b.ID(`"x"`).Method("roots/list") },
			enc{}.Str16(`"x"`).Str16("roots/list").I32(-1).I32(-1).I32(0),
			text(`"x"`), text("roots/list"), null, int32(-1), int32(0)),
		notification.cases("all set",
			func(b *mcp.McpNotificationFlushExBuilder) {
				b.Method("notifications/message").Params(`{"level":"info","data":"x"}`)
			},
			enc{}.Str16("notifications/message").I32(27).Add([]byte(`{"level":"info","data":"x"}`)...).I32(-1).I32(0),
			text("notifications/message"), text(`{"level":"info","data":"x"}`), int32(-1), int32(0)),
		notification.cases("a part",
			func(b *mcp.McpNotificationFlushExBuilder) {
				b.Method("notifications/message").Params(`"data":"x"}`).Total(27).Start(16)
			},
			enc{}.Str16("notifications/message").I32(11).Add([]byte(`"data":"x"}`)...).I32(27).I32(16),
			text("notifications/message"), text(`"data":"x"}`), int32(27), int32(16)),
		notification.cases("params default",
			func(b *mcp.McpNotificationFlushExBuilder) { b.Method("notifications/message") },
			enc{}.Str16("notifications/message").I32(-1).I32(-1).I32(0),
			text("notifications/message"), null, int32(-1), int32(0)),
		resourcesUpdated.cases("all set",
			func(b *mcp.McpResourcesUpdatedFlushExBuilder) { b.ID("upd-3").URI("file:///etc/motd") },
			enc{}.Str16("upd-3").Str16("file:///etc/motd"),
			text("upd-3"), text("file:///etc/motd")),
		resourcesUpdated.cases("id default",
			func(b *mcp.McpResourcesUpdatedFlushExBuilder) { b.URI("file:///x") },
			enc{}.Null16().Str16("file:///x"),
			null, text("file:///x")),

		// McpChallengeEx
		resume.cases("all set",
			func(b *mcp.McpResumeChallengeExBuilder) { b.ID("resume-1") },
			enc{}.Str16("resume-1"), text("resume-1")),
		resume.cases("id default",
			nil,
			enc{}.Null16(), null),
		suspended.cases("empty",
			nil,
			enc{}),
		elicitCreate.cases("all set",
			func(b *mcp.McpElicitCreateChallengeExBuilder) {
				b.ID("el-1").URL("https://e.example/1").Message("Please confirm").CorrelationID("corr-1")
			},
			enc{}.Str16("el-1").Str16("https://e.example/1").Str16("Please confirm").Str16("corr-1"),
			text("el-1"), text("https://e.example/1"), text("Please confirm"), text("corr-1")),
		elicitCreate.cases("defaults",
			func(b *mcp.McpElicitCreateChallengeExBuilder) { b.ID("el-2").URL("https://e.example/2") },
			enc{}.Str16("el-2").Str16("https://e.example/2").Null16().Null16(),
			text("el-2"), text("https://e.example/2"), null, null),
		elicitCreate.cases("message default, correlationId set",
			func(b *mcp.McpElicitCreateChallengeExBuilder) {
				b.ID("el-3").URL("https://e.example/3").CorrelationID("corr-3")
			},
			enc{}.Str16("el-3").Str16("https://e.example/3").Null16().Str16("corr-3"),
			text("el-3"), text("https://e.example/3"), null, text("corr-3")),

		// McpResetEx
		bearer.cases("all set",
			func(b *mcp.McpBearerResetExBuilder) {
				b.Realm("mcp").Scopes("tools:read tools:call").
					ResourceMetadata("https://rs.example/.well-known/oauth-protected-resource").
					Error(mcp.McpBearerErrorInsufficientScope)
			},
			enc{}.Str16("mcp").Str16("tools:read tools:call").
				Str16("https://rs.example/.well-known/oauth-protected-resource").U8(2),
			text("mcp"), text("tools:read tools:call"),
			text("https://rs.example/.well-known/oauth-protected-resource"), mcp.McpBearerErrorInsufficientScope),
		bearer.cases("defaults",
			func(b *mcp.McpBearerResetExBuilder) { b.Error(mcp.McpBearerErrorInvalidToken) },
			enc{}.Null16().Null16().Null16().U8(1),
			null, null, null, mcp.McpBearerErrorInvalidToken),
		bearer.cases("realm set, the rest default",
			func(b *mcp.McpBearerResetExBuilder) { b.Realm("r").Error(mcp.McpBearerErrorInvalidRequest) },
			enc{}.Str16("r").Null16().Null16().U8(0),
			text("r"), null, null, mcp.McpBearerErrorInvalidRequest),
		errorReset.cases("all set",
			func(b *mcp.McpErrorResetExBuilder) { b.Code(-32601).Message("Method not found") },
			enc{}.I32(-32601).Str16("Method not found"),
			int32(-32601), text("Method not found")),
		errorReset.cases("message default",
			func(b *mcp.McpErrorResetExBuilder) { b.Code(-32603) },
			enc{}.I32(-32603).Null16(),
			int32(-32603), null),

		// McpEventEx
		sessionEstablished.cases("all set",
			func(b *mcp.McpSessionEstablishedExBuilder) { b.SessionID("sess-ev1") },
			enc{}.Str16("sess-ev1"), text("sess-ev1")),
		sessionClosed.cases("all set",
			func(b *mcp.McpSessionClosedExBuilder) { b.SessionID("sess-ev2").Reason("idle timeout") },
			enc{}.Str16("sess-ev2").Str16("idle timeout"),
			text("sess-ev2"), text("idle timeout")),
		sessionClosed.cases("reason default",
			func(b *mcp.McpSessionClosedExBuilder) { b.SessionID("sess-ev3") },
			enc{}.Str16("sess-ev3").Null16(),
			text("sess-ev3"), null),
		authorizationFailed.cases("all set",
			func(b *mcp.McpAuthorizationFailedExBuilder) {
				b.Realm("mcp").Scopes("admin").ResourceMetadata("https://rs.example/meta").
					Error(mcp.McpBearerErrorInvalidToken)
			},
			enc{}.Str16("mcp").Str16("admin").Str16("https://rs.example/meta").U8(1),
			text("mcp"), text("admin"), text("https://rs.example/meta"), mcp.McpBearerErrorInvalidToken),
		authorizationFailed.cases("defaults",
			func(b *mcp.McpAuthorizationFailedExBuilder) { b.Error(mcp.McpBearerErrorInsufficientScope) },
			enc{}.Null16().Null16().Null16().U8(2),
			null, null, null, mcp.McpBearerErrorInsufficientScope),
		elicitationTimeout.cases("all set",
			func(b *mcp.McpElicitationTimeoutExBuilder) { b.SessionID("sess-ev4").ElicitationID("elicit-77") },
			enc{}.Str16("sess-ev4").Str16("elicit-77"),
			text("sess-ev4"), text("elicit-77")),

		[]flyweighttest.Case{
			abort.Scenario("all set",
				func(b *mcp.McpAbortExBuilder) { b.CompositeID(cid).TypeID(tid).Reason("client went away") },
				enc{}.Ext(cid, tid).Str16("client went away"),
				cid, tid, text("client went away")),
			abort.Scenario("defaults",
				func(b *mcp.McpAbortExBuilder) { b.TypeID(tid) },
				enc{}.Ext(0, tid).Null16(),
				int64(0), tid, null),
			abort.Scenario("explicit null reason",
				func(b *mcp.McpAbortExBuilder) { b.CompositeID(-1).TypeID(-1).ReasonNull() },
				enc{}.Ext(-1, -1).Null16(),
				int64(-1), int32(-1), null),
			end.Scenario("all set",
				func(b *mcp.McpEndExBuilder) { b.CompositeID(cid).TypeID(tid).Outcome(mcp.McpOutcomeError) },
				enc{}.Ext(cid, tid).U8(1),
				cid, tid, mcp.McpOutcomeError),
			end.Scenario("defaults",
				func(b *mcp.McpEndExBuilder) { b.TypeID(tid) },
				enc{}.Ext(0, tid).U8(0),
				int64(0), tid, mcp.McpOutcomeOk),
		},
	)
	return cases
}

func TestRoundTrip(t *testing.T) {
	flyweighttest.RunRoundTrip(t, mcpCases())
}

// TestEveryUnionCaseCovered guards mcpCases against a case added to the IDL
// but not to the table.
func TestEveryUnionCaseCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range mcpCases() {
		seen[tc.Type] = true
	}
	for _, typ := range []string{
		"McpBeginEx", "McpFlushEx", "McpChallengeEx", "McpResetEx", "McpEventEx", "McpAbortEx", "McpEndEx",
		"McpLifecycleBeginEx", "McpToolsListBeginEx", "McpToolsCallBeginEx", "McpPromptsListBeginEx",
		"McpPromptsGetBeginEx", "McpResourcesListBeginEx", "McpResourcesReadBeginEx",
		"McpResourcesTemplatesListBeginEx", "McpResourcesSubscribeBeginEx", "McpResourcesUnsubscribeBeginEx",
		"McpRequestBeginEx", "McpClientResponseBeginEx", "McpClientRequestFlushEx", "McpNotificationFlushEx", "McpResumableFlushEx", "McpToolsListChangedFlushEx", "McpPromptsListChangedFlushEx",
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
		if strings.Count(tc.Name, "/") != 2 {
			continue
		}
		if kinds[tc.Type] == nil {
			kinds[tc.Type] = map[uint8]bool{}
		}
		kinds[tc.Type][uint8(reflect.ValueOf(tc.Want[2]).Uint())] = true
	}
	counts := map[string]int{}
	for typ, ks := range kinds {
		counts[typ] = len(ks)
	}
	assert.Equal(t, map[string]int{"McpBeginEx": 12, "McpFlushEx": 12, "McpChallengeEx": 3, "McpResetEx": 2, "McpEventEx": 4}, counts,
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
		0x00, 0x00, // subscriptions: default 0
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
	flyweighttest.RunWrapTruncated(t, mcpCases())
}

func TestBuildOverflow(t *testing.T) {
	flyweighttest.RunBuildOverflow(t, mcpCases())
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
		}, want: enc{}.Ext(0, tid).U8(1).Str16("s").I64(0)},
		{name: "McpFlushEx", build: func(buf []byte) (int, error) {
			var b mcp.McpFlushExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).Suspend().Retry(3)
			return b.BuildLimit()
		}, want: enc{}.Ext(0, tid).U8(5).I64(3)},
		{name: "McpChallengeEx", build: func(buf []byte) (int, error) {
			var b mcp.McpChallengeExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).Suspended()
			return b.BuildLimit()
		}, want: enc{}.Ext(0, tid).U8(1)},
		{name: "McpResetEx", build: func(buf []byte) (int, error) {
			var b mcp.McpResetExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).Error().Code(7).Message("m")
			return b.BuildLimit()
		}, want: enc{}.Ext(0, tid).U8(1).I32(7).Str16("m")},
		{name: "McpEventEx", build: func(buf []byte) (int, error) {
			var b mcp.McpEventExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(tid).SessionEstablished().SessionID("s")
			return b.BuildLimit()
		}, want: enc{}.Ext(0, tid).U8(1).Str16("s")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := flyweighttest.Filled(64, flyweighttest.Sentinel)
			limit, err := tc.build(buf)
			require.NoError(t, err)
			assert.Equal(t, []byte(tc.want), buf[:limit])
		})
	}
}
func TestWrapErrors(t *testing.T) {
	call := enc{}.Str16("n").I32(-1).I64(0)
	flyweighttest.RunWrapErrors(t, []flyweighttest.WrapError{
		{Name: "McpBeginEx kind 12", Wrap: flyweighttest.WrapAs[mcp.McpBeginEx],
			Buf: enc{}.Ext(cid, tid).U8(12).Str16("s").I64(0), Want: flyweight.ErrKind, Type: "McpBeginEx", Field: "kind"},
		{Name: "McpBeginEx kind 255", Wrap: flyweighttest.WrapAs[mcp.McpBeginEx],
			Buf: enc{}.Ext(cid, tid).U8(255), Want: flyweight.ErrKind, Type: "McpBeginEx", Field: "kind"},
		{Name: "McpFlushEx kind 12", Wrap: flyweighttest.WrapAs[mcp.McpFlushEx],
			Buf: enc{}.Ext(cid, tid).U8(12).Null16(), Want: flyweight.ErrKind, Type: "McpFlushEx", Field: "kind"},
		{Name: "McpChallengeEx kind 3", Wrap: flyweighttest.WrapAs[mcp.McpChallengeEx],
			Buf: enc{}.Ext(cid, tid).U8(3).Null16(), Want: flyweight.ErrKind, Type: "McpChallengeEx", Field: "kind"},
		{Name: "McpResetEx kind 2", Wrap: flyweighttest.WrapAs[mcp.McpResetEx],
			Buf: enc{}.Ext(cid, tid).U8(2).I32(0).Null16(), Want: flyweight.ErrKind, Type: "McpResetEx", Field: "kind"},
		{Name: "McpEventEx kind 0", Wrap: flyweighttest.WrapAs[mcp.McpEventEx],
			Buf: enc{}.Ext(cid, tid).U8(0).Str16("s"), Want: flyweight.ErrKind, Type: "McpEventEx", Field: "kind"},
		{Name: "McpEventEx kind 5", Wrap: flyweighttest.WrapAs[mcp.McpEventEx],
			Buf: enc{}.Ext(cid, tid).U8(5).Str16("s"), Want: flyweight.ErrKind, Type: "McpEventEx", Field: "kind"},
		{Name: "sessionId length -2", Wrap: flyweighttest.WrapAs[mcp.McpToolsCallBeginEx],
			Buf: enc{}.U16(0xfffe).Add(call...), Want: flyweight.ErrLength, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "sessionId length -32768", Wrap: flyweighttest.WrapAs[mcp.McpToolsCallBeginEx],
			Buf: enc{}.U16(0x8000).Add(call...), Want: flyweight.ErrLength, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "name length -2", Wrap: flyweighttest.WrapAs[mcp.McpToolsCallBeginEx],
			Buf: enc{}.Str16("s").U16(0xfffe).I32(-1).I64(0), Want: flyweight.ErrLength, Type: "McpToolsCallBeginEx", Field: "name"},
		{Name: "sessionId length -2 through the union", Wrap: flyweighttest.WrapAs[mcp.McpBeginEx],
			Buf: enc{}.Ext(cid, tid).U8(2).U16(0xfffe).Add(call...), Want: flyweight.ErrLength, Type: "McpBeginEx", Field: "toolsCall"},
		{Name: "authCallback length -2", Wrap: flyweighttest.WrapAs[mcp.McpLifecycleBeginEx],
			Buf: enc{}.Null16().U16(1).U16(0xfffe), Want: flyweight.ErrLength, Type: "McpLifecycleBeginEx", Field: "authCallback"},
		{Name: "reason length -2", Wrap: flyweighttest.WrapAs[mcp.McpAbortEx],
			Buf: enc{}.Ext(cid, tid).U16(0xfffe), Want: flyweight.ErrLength, Type: "McpAbortEx", Field: "reason"},
		{Name: "sessionId longer than the buffer", Wrap: flyweighttest.WrapAs[mcp.McpToolsCallBeginEx],
			Buf: enc{}.U16(100).Add([]byte("abc")...), Want: flyweight.ErrShort, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "sessionId length max int16", Wrap: flyweighttest.WrapAs[mcp.McpBeginEx],
			Buf: enc{}.Ext(cid, tid).U8(1).U16(0x7fff).I64(0), Want: flyweight.ErrShort, Type: "McpBeginEx", Field: "toolsList"},
		{Name: "string length covers the fields after it", Wrap: flyweighttest.WrapAs[mcp.McpToolsCallBeginEx],
			Buf: enc{}.U16(uint16(len(call))).Add(call...), Want: flyweight.ErrShort, Type: "McpToolsCallBeginEx", Field: "name"},
	})
}

func TestWrapBounds(t *testing.T) {
	buf := enc{}.Ext(cid, tid).U8(1).Str16("s").I64(0)
	flyweighttest.RunWrapBounds(t, buf, func(t *testing.T, off, limit int) {
		var v mcp.McpBeginEx
		assert.ErrorIs(t, v.Wrap(buf, off, limit), flyweight.ErrBounds)
		assert.False(t, v.TryWrap(buf, off, limit))
		var s mcp.McpToolsListBeginEx
		assert.ErrorIs(t, s.Wrap(buf, off, limit), flyweight.ErrBounds)
	})
}

func TestBuildErrors(t *testing.T) {
	errCustom := errors.New("custom")
	flyweighttest.RunBuildErrors(t, []flyweighttest.BuildError{
		{Name: "toolsCall without name", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpToolsCallBeginEx", Field: "name"},
		{Name: "toolsCall without name, timeout set", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Timeout(5).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpToolsCallBeginEx", Field: "name"},
		{Name: "toolsCall without name, through the union", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).ToolsCall().SessionID("s")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpToolsCallBeginEx", Field: "name"},
		{Name: "toolsCall without sessionId", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "union without typeId", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpBeginEx", Field: "typeId"},
		{Name: "union without a case", Build: func(buf []byte) error {
			var b mcp.McpFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpFlushEx", Field: "kind"},
		{Name: "progress without progress", Build: func(buf []byte) error {
			var b mcp.McpProgressFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).ID("i").Token("t").Total(5).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpProgressFlushEx", Field: "progress"},
		{Name: "elicitResponse without action", Build: func(buf []byte) error {
			var b mcp.McpElicitResponseFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).CorrelationID("c").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpElicitResponseFlushEx", Field: "action"},
		{Name: "bearer without error", Build: func(buf []byte) error {
			var b mcp.McpBearerResetExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Realm("r").Scopes("s").ResourceMetadata("m").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpBearerResetEx", Field: "error"},
		{Name: "bearer with nothing set", Build: func(buf []byte) error {
			var b mcp.McpBearerResetExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpBearerResetEx", Field: "error"},
		{Name: "resourcesUpdated without uri, id set", Build: func(buf []byte) error {
			var b mcp.McpResourcesUpdatedFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).ID("i").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpResourcesUpdatedFlushEx", Field: "uri"},
		{Name: "resourcesUpdated with nothing set", Build: func(buf []byte) error {
			var b mcp.McpResourcesUpdatedFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpResourcesUpdatedFlushEx", Field: "uri"},
		{Name: "resourcesUpdated with nothing set, BuildLimit", Build: func(buf []byte) error {
			var b mcp.McpResourcesUpdatedFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).BuildLimit()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpResourcesUpdatedFlushEx", Field: "uri"},
		{Name: "errorReset without code", Build: func(buf []byte) error {
			var b mcp.McpErrorResetExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Message("m").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpErrorResetEx", Field: "code"},
		{Name: "elicitCreate without url", Build: func(buf []byte) error {
			var b mcp.McpElicitCreateChallengeExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).ID("i").Message("m").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpElicitCreateChallengeEx", Field: "url"},
		{Name: "endEx without typeId", Build: func(buf []byte) error {
			var b mcp.McpEndExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Outcome(mcp.McpOutcomeOk).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpEndEx", Field: "typeId"},
		{Name: "sessionEstablished without sessionId", Build: func(buf []byte) error {
			var b mcp.McpEventExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).SessionEstablished()
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpSessionEstablishedEx", Field: "sessionId"},
		{Name: "sessionId after name", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Name("n").SessionID("t").Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "contentLength after timeout", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Name("n").Timeout(1).ContentLength(2).Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpToolsCallBeginEx", Field: "contentLength"},
		{Name: "name twice", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID("s").Name("n").NameNull().Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpToolsCallBeginEx", Field: "name"},
		{Name: "union compositeId after typeId", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).CompositeID(2).ToolsList().SessionID("s")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpBeginEx", Field: "compositeId"},
		{Name: "union typeId after the case", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.TypeID(3).Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpBeginEx", Field: "typeId"},
		{Name: "union second case", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			b.ToolsList().SessionID("s")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpBeginEx", Field: "kind"},
		{Name: "outcome twice", Build: func(buf []byte) error {
			var b mcp.McpEndExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).Outcome(mcp.McpOutcomeOk).Outcome(mcp.McpOutcomeError).Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "McpEndEx", Field: "outcome"},
		{Name: "string too long for string16", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).SessionID(strings.Repeat("s", 1<<15)).Name("n").Build()
			return err
		}, Want: flyweight.ErrRange, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "bytes too long for string16, through the union", Build: func(buf []byte) error {
			var b mcp.McpFlushExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).Resumable().IDBytes(make([]byte, 1<<15))
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrRange, Type: "McpResumableFlushEx", Field: "id"},
		{Name: "tiny buffer", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, 4).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOverflow, Type: "McpBeginEx", Field: "compositeId"},
		{Name: "no room for the kind", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, 12).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOverflow, Type: "McpBeginEx", Field: "kind"},
		{Name: "no room for the case", Build: func(buf []byte) error {
			var b mcp.McpBeginExBuilder
			b.Wrap(buf, 0, 14).CompositeID(1).TypeID(2).ToolsCall().SessionID("s").Name("n")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOverflow, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "offset past maxLimit", Build: func(buf []byte) error {
			var b mcp.McpEndExBuilder
			_, err := b.Wrap(buf, 8, 4).TypeID(1).Build()
			return err
		}, Want: flyweight.ErrBounds, Type: "McpEndEx"},
		{Name: "maxLimit past the buffer", Build: func(buf []byte) error {
			var b mcp.McpChallengeExBuilder
			b.Wrap(buf, 0, len(buf)+1).TypeID(1).Suspended()
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrBounds, Type: "McpChallengeEx"},
		{Name: "errors are sticky", Build: func(buf []byte) error {
			var b mcp.McpToolsCallBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").SessionID("s").Name("n").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "McpToolsCallBeginEx", Field: "sessionId"},
		{Name: "Fail", Build: func(buf []byte) error {
			var b mcp.McpAbortExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).Fail(errCustom).Reason("r").Build()
			return err
		}, Want: errCustom},
	})
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
			buf: enc{}.Ext(cid, tid).U8(1).Str16("s").I64(9),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpBeginEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(-2)
				v.SetTypeID(-3)
			},
			want: enc{}.Ext(-2, -3).U8(1).Str16("s").I64(9)},
		{name: "McpFlushEx",
			buf: enc{}.Ext(cid, tid).U8(5).I64(9),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpFlushEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(4)
				v.SetTypeID(5)
				s := v.Suspend()
				s.SetRetry(6)
			},
			want: enc{}.Ext(4, 5).U8(5).I64(6)},
		{name: "McpChallengeEx",
			buf: enc{}.Ext(cid, tid).U8(1),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpChallengeEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(7)
				v.SetTypeID(8)
			},
			want: enc{}.Ext(7, 8).U8(1)},
		{name: "McpResetEx",
			buf: enc{}.Ext(cid, tid).U8(1).I32(-32601).Str16("m"),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpResetEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(9)
				v.SetTypeID(10)
				e := v.Error()
				e.SetCode(42)
			},
			want: enc{}.Ext(9, 10).U8(1).I32(42).Str16("m")},
		{name: "McpEventEx",
			buf: enc{}.Ext(cid, tid).U8(1).Str16("s"),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpEventEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(11)
				v.SetTypeID(12)
			},
			want: enc{}.Ext(11, 12).U8(1).Str16("s")},
		{name: "McpAbortEx",
			buf: enc{}.Ext(cid, tid).Str16("r"),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpAbortEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(13)
				v.SetTypeID(14)
			},
			want: enc{}.Ext(13, 14).Str16("r")},
		{name: "McpEndEx",
			buf: enc{}.Ext(cid, tid).U8(0),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpEndEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCompositeID(15)
				v.SetTypeID(16)
				v.SetOutcome(mcp.McpOutcomeError)
				assert.Equal(t, mcp.McpOutcomeError, v.Outcome())
			},
			want: enc{}.Ext(15, 16).U8(1)},
		{name: "McpSuspendFlushEx",
			buf: enc{}.I64(1),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpSuspendFlushEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetRetry(-1)
			},
			want: enc{}.I64(-1)},
		{name: "McpErrorResetEx",
			buf: enc{}.I32(1).Null16(),
			set: func(t *testing.T, buf []byte) {
				var v mcp.McpErrorResetEx
				require.NoError(t, v.Wrap(buf, 0, len(buf)))
				v.SetCode(-1)
			},
			want: enc{}.I32(-1).Null16()},
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
	encoded := []byte(enc{}.Ext(cid, tid).U8(mcp.McpBeginExKindToolsCall).Str16("sess-1").Str16("get_weather").I32(5).I64(6))
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
		enc{}.Ext(cid, tid).U8(mcp.McpBeginExKindToolsCall).Str16("sess-1").Str16("get_weather").I32(512).I64(30000),
		enc{}.Ext(0, 1).U8(mcp.McpBeginExKindLifecycle).Null16().U16(0x0901).Null16().U16(56),
		enc{}.Ext(0, 1).U8(mcp.McpBeginExKindRequest).Str16("s").Str16("completion/complete").I32(-1).I64(0),
		enc{}.Ext(-1, -1).U8(mcp.McpBeginExKindResourcesRead).Str16("").Str16("file:///a").I32(-1).I64(0),
		enc{}.Ext(2, 3).U8(mcp.McpBeginExKindResourcesTemplatesList).Null16().I64(1 << 40),
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
	case mcp.McpBeginExKindRequest:
		return readCase(u, u.Request(), readRequest)
	case mcp.McpBeginExKindClientResponse:
		return readCase(u, u.ClientResponse(), readClientResponse)
	}
	return nil
}

func readCase[V any, PV flyweighttest.Reader[V]](u *mcp.McpBeginEx, v V, read func(*V) []any) []any {
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
