package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendTokens(t *testing.T) {
	for text, want := range map[string][]string{
		"github__list_repos":            {"github", "list", "repos"},
		"parseXMLDocument":              {"parse", "xml", "document"},
		"getHTTP2Status":                {"get", "http2", "status"},
		"Get the current weather, NOW!": {"get", "current", "weather", "now"},
		"Übersicht der Straßen":         {"übersicht", "der", "straßen"},
		"a an the":                      nil,
		"":                              nil,
		"x\xffy":                        {"x", "y"},
	} {
		assert.Equal(t, want, appendTokens(nil, []byte(text)), "%q", text)
	}
	long := make([]byte, 200)
	for i := range long {
		long[i] = 'z'
	}
	got := appendTokens(nil, long)
	require.Len(t, got, 1)
	assert.Len(t, got[0], maxToken, "a long word is cut")
}

func testCatalog(t *testing.T) *catalog {
	t.Helper()
	c := readCatalog([]byte(`{"tools":[` +
		`{"name":"a__add","description":"Adds two numbers"},` +
		`{"name":"b__add","description":"Adds two numbers"},` +
		`{"name":"weather_forecast","description":"Forecast the weather for a city","outputSchema":{"type":"object","properties":{"temperature":{"type":"number"}}}},` +
		`{"name":"get_weather","description":"Get current weather information for a location"},` +
		`{"description":"no name"},` +
		`{"name":"a__add","description":"a second a__add is not read"},` +
		`{"name":"delete_repo"}]}`))
	require.Len(t, c.tools, 5)
	return c
}

func names(c *catalog, ms []match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, c.tools[m.tool].name)
	}
	return out
}

var nameAndDescription = [fieldCount]float64{1, 1, 0}

func TestKeywordIndex(t *testing.T) {
	c := testCatalog(t)
	x := newKeywordIndex(c, &nameAndDescription)
	all := func(int32) bool { return true }

	assert.Equal(t, []string{"weather_forecast", "get_weather"}, names(c, x.query(nil, []byte("weather"), 5, all)),
		"of two tools with the term as often, the shorter ranks first")
	assert.Equal(t, []string{"a__add", "b__add"}, names(c, x.query(nil, []byte("add numbers"), 5, all)),
		"equal scores keep list order")
	assert.Equal(t, []string{"a__add"}, names(c, x.query(nil, []byte("add numbers"), 1, all)), "limit")
	assert.Equal(t, []string{"b__add"}, names(c, x.query(nil, []byte("add"), 5, func(i int32) bool { return c.tools[i].name != "a__add" })),
		"admit filters before the limit")
	assert.Empty(t, x.query(nil, []byte("temperature"), 5, all), "output-schema is not indexed unless asked")
	assert.Equal(t, []string{"delete_repo"}, names(c, x.query(nil, []byte("DeleteRepo"), 5, all)))
	assert.Empty(t, x.query(nil, []byte("the"), 5, all))

	withSchema := newKeywordIndex(c, &[fieldCount]float64{1, 1, 1})
	assert.Equal(t, []string{"weather_forecast"}, names(c, withSchema.query(nil, []byte("temperature"), 5, all)))

	nameHeavy := newKeywordIndex(c, &[fieldCount]float64{5, 1, 0})
	got := names(c, nameHeavy.query(nil, []byte("forecast weather"), 5, all))
	assert.Equal(t, "weather_forecast", got[0], "a heavy name weight ranks the name match first")

	// The scratch scores are left clean for the next query.
	for _, s := range x.scores {
		assert.Zero(t, s)
	}
}

func TestInsertRanked(t *testing.T) {
	var r []match
	for i, s := range []float64{1, 3, 2, 3, 0.5} {
		r = insertRanked(r, match{tool: int32(i), score: s}, 3)
	}
	assert.Equal(t, []match{{1, 3}, {3, 3}, {2, 2}}, r)
}
