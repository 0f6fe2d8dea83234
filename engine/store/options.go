package store

import "github.com/sluicehq/sluice/engine/spi"

// checkKeys fails with [ErrUnknownOption] on the first key of options, in
// sorted order so the error is stable, that is not one of known.
func checkKeys(options map[string]any, known ...string) error {
	return spi.CheckKeys(options, ErrUnknownOption, known...)
}
