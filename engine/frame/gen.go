package frame

//go:generate go tool codegen -idl ../../idl/core.idl -out .
