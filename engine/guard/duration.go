package guard

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses the ISO-8601 durations Zilla's configuration uses
// (java.time.Duration's text form): P, then optionally nD, then optionally
// T followed by any of nH, nM and n[.fraction]S, in that order, with at
// least one component, as in PT5S, PT1M30S, PT0.5S or P1DT12H. Letters may
// be lower case and the fraction separator may be a comma, as Java
// accepts. Signs are not accepted: every duration the guard options take
// is non-negative. Anything else fails with [ErrInvalidDuration].
func ParseDuration(s string) (time.Duration, error) {
	d, ok := parseDuration(s)
	if !ok {
		return 0, fmt.Errorf("%w %q", ErrInvalidDuration, s)
	}
	return d, nil
}

// ErrNotPositive is the error of [PositiveDuration] for a text that is no
// positive duration.
var ErrNotPositive = errors.New("want a positive duration such as PT15S")

// PositiveDuration parses a positive duration written either as Zilla's
// configuration writes it (ISO-8601, PT15S) or as Go does (15s), the two
// forms every duration option of a binding takes.
func PositiveDuration(v string) (time.Duration, error) {
	d, err := ParseDuration(v)
	if err != nil {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d <= 0 {
		return 0, ErrNotPositive
	}
	return d, nil
}

// durationUnits are the components in the order they must appear.
var durationUnits = [...]struct {
	letter byte
	time   bool // after the T
	unit   time.Duration
}{
	{'D', false, 24 * time.Hour},
	{'H', true, time.Hour},
	{'M', true, time.Minute},
	{'S', true, time.Second},
}

func parseDuration(s string) (time.Duration, bool) {
	rest, ok := strings.CutPrefix(strings.ToUpper(s), "P")
	if !ok || rest == "" {
		return 0, false
	}
	var total time.Duration
	inTime := false
	next := 0 // index in durationUnits of the next allowed component
	for rest != "" {
		if rest[0] == 'T' {
			if inTime || len(rest) == 1 {
				return 0, false
			}
			inTime = true
			rest = rest[1:]
			continue
		}
		digits := leadingDigits(rest)
		if digits == 0 {
			return 0, false
		}
		whole := rest[:digits]
		rest = rest[digits:]
		frac, hasFrac := "", false
		if rest != "" && (rest[0] == '.' || rest[0] == ',') {
			n := leadingDigits(rest[1:])
			frac, hasFrac = rest[1:1+n], true
			rest = rest[1+n:]
			if len(frac) > 9 {
				return 0, false
			}
		}
		if rest == "" {
			return 0, false
		}
		letter := rest[0]
		rest = rest[1:]
		i := next
		for i < len(durationUnits) && durationUnits[i].letter != letter {
			i++
		}
		if i == len(durationUnits) || durationUnits[i].time != inTime {
			return 0, false
		}
		next = i + 1
		u := durationUnits[i].unit
		if hasFrac && u != time.Second {
			return 0, false
		}
		n, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || n > math.MaxInt64/int64(u) {
			return 0, false
		}
		d := time.Duration(n) * u
		if frac != "" {
			ns, _ := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
			if d > math.MaxInt64-time.Duration(ns) {
				return 0, false
			}
			d += time.Duration(ns)
		}
		if total > math.MaxInt64-d {
			return 0, false
		}
		total += d
	}
	// "P1DT" is caught above; "P" alone and "PT" leave next at 0.
	return total, next > 0
}

func leadingDigits(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}
