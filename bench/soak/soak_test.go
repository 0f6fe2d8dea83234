package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAnswerEvent(t *testing.T) {
	notices := 0
	stream := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\n" + "data: \"result\":{}}\n\n" + "data: {\"late\":1}\n\n"
	msg, err := answerEvent(strings.NewReader(stream), func() { notices++ })
	if err != nil {
		t.Fatal(err)
	}
	if string(msg) != `{"jsonrpc":"2.0","id":7,"result":{}}` || notices != 1 {
		t.Fatalf("got %q after %d notices, want the answer after 1", msg, notices)
	}
	if _, err := answerEvent(strings.NewReader("data: {\"method\":\"x\"}\n\n"), nil); err == nil {
		t.Fatal("a stream without an answer: want an error")
	}
}

func TestJudgeClosed(t *testing.T) {
	limit := 4 * time.Second
	if ok, d := judgeClosed([]time.Duration{time.Second, 2 * time.Second}, nil, limit); !ok {
		t.Fatalf("both closed within the limit: %s", d)
	}
	if ok, d := judgeClosed([]time.Duration{time.Second, -1}, nil, limit); ok || !strings.Contains(d, "1/2 closed") {
		t.Fatalf("one still open: %v %s", ok, d)
	}
	if ok, _ := judgeClosed([]time.Duration{5 * time.Second}, nil, limit); ok {
		t.Fatal("closed after the limit must not hold")
	}
	if ok, d := judgeClosed(nil, errors.New("dial refused"), limit); ok || d != "dial refused" {
		t.Fatalf("a dial error: %v %s", ok, d)
	}
}
