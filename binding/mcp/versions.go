package mcp

import "fmt"

// Version is an MCP protocol revision. Revisions are numbered in release
// order, so v >= Version20251125 reads "2025-11-25 or later". The era
// decides the transport rules: the three 2025 revisions have sessions
// (MCP.md §1), 2026-07-28 has none (§3.4).
type Version uint8

// The revisions Sluice speaks, between VersionNone (a request without
// MCP-Protocol-Version) and VersionUnsupported (any other text).
const (
	VersionNone Version = iota
	Version20250326
	Version20250618
	Version20251125
	Version20260728
	VersionUnsupported
)

var versionNames = [...]string{
	Version20250326: "2025-03-26",
	Version20250618: "2025-06-18",
	Version20251125: "2025-11-25",
	Version20260728: "2026-07-28",
}

// String returns the revision's date, as MCP-Protocol-Version and
// protocolVersion carry it; "" for VersionNone and VersionUnsupported.
func (v Version) String() string {
	if v < VersionUnsupported {
		return versionNames[v]
	}
	return ""
}

// ParseVersion returns the revision named b, or VersionUnsupported.
func ParseVersion(b []byte) Version {
	for v := Version20250326; v < VersionUnsupported; v++ {
		if string(b) == versionNames[v] {
			return v
		}
	}
	return VersionUnsupported
}

// LookupVersion returns the revision a configuration names, or an error
// that lists the supported ones.
func LookupVersion(name string) (Version, error) {
	v := ParseVersion([]byte(name))
	if v == VersionUnsupported {
		return v, fmt.Errorf("unsupported protocol version %q; want %s, %s, %s or %s", name,
			Version20250326, Version20250618, Version20251125, Version20260728)
	}
	return v, nil
}
