package store

import (
	"fmt"
	"slices"
)

// checkKeys fails with [ErrUnknownOption] on the first key of options, in
// sorted order so the error is stable, that is not one of known.
func checkKeys(options map[string]any, known ...string) error {
	keys := make([]string, 0, len(options))
	for key := range options {
		if !slices.Contains(known, key) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return fmt.Errorf("%w %q", ErrUnknownOption, keys[0])
}
