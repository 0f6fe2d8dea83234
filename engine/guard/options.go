package guard

import (
	"fmt"
	"github.com/sluicehq/sluice/engine/spi"
	"slices"
	"time"
)

// checkKeys fails with [ErrUnknownOption] on the first key of options, in
// sorted order so the error is stable, that is not one of known.
func checkKeys(options map[string]any, known ...string) error {
	return spi.CheckKeys(options, ErrUnknownOption, known...)
}

func invalid(key string, want string, got any) error {
	return fmt.Errorf("%w: %s: want %s, got %T", ErrInvalidOption, key, want, got)
}

// optString reads a string option.
func optString(options map[string]any, key string) (string, bool, error) {
	v, ok := options[key]
	if !ok {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, invalid(key, "string", v)
	}
	return s, true, nil
}

// optStrings reads an array of strings. Decoders give []any; []string is
// accepted for callers building options in Go.
func optStrings(options map[string]any, key string) ([]string, error) {
	switch v := options[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return slices.Clone(v), nil
	case []any:
		out := make([]string, len(v))
		for i, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, invalid(fmt.Sprintf("%s[%d]", key, i), "string", item)
			}
			out[i] = s
		}
		return out, nil
	default:
		return nil, invalid(key, "array", v)
	}
}

// optStringMap reads an object of string values.
func optStringMap(options map[string]any, key string) (map[string]string, error) {
	switch v := options[key].(type) {
	case nil:
		return nil, nil
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, s := range v {
			out[k] = s
		}
		return out, nil
	case map[string]any:
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		out := make(map[string]string, len(v))
		for _, name := range names {
			s, ok := v[name].(string)
			if !ok {
				return nil, invalid(key+"."+name, "string", v[name])
			}
			out[name] = s
		}
		return out, nil
	default:
		return nil, invalid(key, "object", v)
	}
}

// optCount reads a non-negative integer. YAML and JSON decoders differ in
// the numeric type they produce, so every integral form is accepted.
func optCount(options map[string]any, key string) (int64, bool, error) {
	v, ok := options[key]
	if !ok {
		return 0, false, nil
	}
	n, ok := spi.Integer(v)
	if !ok {
		return 0, false, invalid(key, "integer", v)
	}
	if n < 0 {
		return 0, false, fmt.Errorf("%w: %s: must not be negative, got %d", ErrInvalidOption, key, n)
	}
	return n, true, nil
}

// optDuration reads an ISO-8601 duration such as PT5S.
func optDuration(options map[string]any, key string) (time.Duration, bool, error) {
	s, ok, err := optString(options, key)
	if err != nil || !ok {
		return 0, false, err
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s: %w", ErrInvalidOption, key, err)
	}
	return d, true, nil
}
