// Package flyweighttest holds the round-trip machinery shared by the tests of
// generated flyweights: a hand encoder of the expected bytes ([Enc]), decoded
// string values ([NStr], [StrOf]), type-erased scenarios of one generated
// type ([Type], [Case]), the checks every scenario goes through
// ([RunRoundTrip], [RunWrapTruncated], [RunBuildOverflow]), and the runners
// of tables of failures ([RunWrapErrors], [RunBuildErrors], [RunWrapBounds]).
//
// A binding's black-box test lists its scenarios once and runs them through
// every check:
//
//	header := flyweighttest.Type[http.HttpHeaderBuilder, *http.HttpHeaderBuilder, http.HttpHeader, *http.HttpHeader]{Read: readHeader}
//	cases := []flyweighttest.Case{
//		header.Scenario("null strings",
//			func(b *http.HttpHeaderBuilder) { b.NameNull().ValueNull() },
//			flyweighttest.Enc{}.NStr8(flyweighttest.Null).NStr16(flyweighttest.Null),
//			flyweighttest.Null, flyweighttest.Null),
//	}
//	flyweighttest.RunRoundTrip(t, cases)
package flyweighttest
