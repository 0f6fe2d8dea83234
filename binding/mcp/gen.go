package mcp

//go:generate go tool codegen -idl ../../idl/mcp.idl -dep ../../idl/core.idl -out .
