package mcp

//go:generate go run ../../codegen -idl ../../idl/mcp.idl -dep ../../idl/core.idl -out .
