package frame

//go:generate go run ../../codegen -idl ../../idl/core.idl -out .
